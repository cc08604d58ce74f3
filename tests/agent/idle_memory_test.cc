// SPDX-License-Identifier: Apache-2.0

#include "plugin/agent/idle_memory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace k8s_agent {
namespace {

// Writable data, and a relocated table of pointers (.data.rel.ro in a
// PIE): MADV_DONTNEED on either would revert it to the file's bytes.
int g_counter = 0;
int Twice(int x) { return 2 * x; }
int Thrice(int x) { return 3 * x; }
int (*const kTable[])(int) = {Twice, Thrice};
// Read through a volatile index, so the calls load the pointers from the
// table (which the optimiser would otherwise fold away).
volatile size_t g_index = 0;

struct ReadOnlyKb {
  long rss = 0;
  long anonymous = 0;  // Private copies: RELRO, text relocations.
};

// This test binary's read-only mappings, from /proc/self/smaps.
ReadOnlyKb ReadOnlyMappingsKb() {
  char self[4096] = {};
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  std::string exe = n > 0 ? std::string(self, static_cast<size_t>(n)) : "";
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool ours = false;
  ReadOnlyKb kb;
  while (std::getline(smaps, line)) {
    if (line.rfind("Rss:", 0) == 0) {
      if (ours) kb.rss += std::stol(line.substr(4));
      continue;
    }
    if (line.rfind("Anonymous:", 0) == 0) {
      if (ours) kb.anonymous += std::stol(line.substr(10));
      continue;
    }
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode, path;
    // A mapping's header line: "begin-end perms offset dev inode path".
    if (in >> range >> perms >> offset >> dev >> inode &&
        range.find('-') != std::string::npos && perms.size() == 4) {
      in >> path;
      ours = path == exe && perms[1] == '-';
    }
  }
  return kb;
}

TEST(IdleMemoryTest, DropsReadOnlyPagesAndKeepsData) {
  g_counter = 41;
  ReadOnlyKb before = ReadOnlyMappingsKb();
  ASSERT_GT(before.anonymous, 0) << "a PIE has relocated RELRO pages";
  ReleasedMemory r = ReleaseStartupMemory();
  ReadOnlyKb after = ReadOnlyMappingsKb();
  EXPECT_GT(r.advised_bytes, 0u);
  EXPECT_LT(after.rss, before.rss) << before.rss << " KiB before";
  // The private copies (RELRO here) are all still there...
  EXPECT_EQ(after.anonymous, before.anonymous);
  // ...and everything works: data kept, relocated pointers intact, code
  // faults back in.
  ++g_counter;
  EXPECT_EQ(g_counter, 42);
  EXPECT_EQ(kTable[g_index](5), 10);
  EXPECT_EQ(kTable[g_index + 1](5), 15);
}

}  // namespace
}  // namespace k8s_agent
