// SPDX-License-Identifier: Apache-2.0
// ReleaseStartupMemory: malloc_trim and MADV_DONTNEED on the binary's
// clean read-only mappings.

#include "plugin/agent/idle_memory.h"

#include <malloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace k8s_agent {
namespace {

struct Range {
  uintptr_t begin = 0;
  uintptr_t end = 0;
};

// The mappings of the running executable that are read-only, private and
// hold no anonymous (copied-on-write) page, from /proc/self/smaps: the
// kernel's view, not the ELF headers', so text relocations, a debugger's
// breakpoints, RELRO after mprotect, or an image unpacked into anonymous
// memory all keep their pages (MADV_DONTNEED would revert those to the
// file's bytes or to zeros).
std::vector<Range> CleanReadOnlyMappingsOfExe() {
  std::vector<Range> out;
  struct stat exe {};
  if (::stat("/proc/self/exe", &exe) != 0) return out;
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool candidate = false;
  Range current;
  auto finish = [&] {
    if (candidate) out.push_back(current);
    candidate = false;
  };
  while (std::getline(smaps, line)) {
    unsigned long long begin = 0, end = 0, offset = 0, inode = 0;
    unsigned int major = 0, minor = 0;
    char perms[5] = {};
    // A mapping's header: "begin-end perms offset major:minor inode path".
    if (std::sscanf(line.c_str(), "%llx-%llx %4s %llx %x:%x %llu", &begin, &end,
                    perms, &offset, &major, &minor, &inode) == 7) {
      finish();
      candidate = perms[1] == '-' && perms[3] == 'p' &&
                  inode == static_cast<unsigned long long>(exe.st_ino) &&
                  makedev(major, minor) == exe.st_dev;
      current = {static_cast<uintptr_t>(begin), static_cast<uintptr_t>(end)};
      continue;
    }
    unsigned long long kb = 0;
    if (candidate &&
        std::sscanf(line.c_str(), "Anonymous: %llu kB", &kb) == 1 && kb != 0) {
      candidate = false;
    }
  }
  finish();
  return out;
}

}  // namespace

ReleasedMemory ReleaseStartupMemory() {
  ::malloc_trim(0);
  ReleasedMemory released;
  for (const Range& r : CleanReadOnlyMappingsOfExe()) {
    if (::madvise(reinterpret_cast<void*>(r.begin), r.end - r.begin,
                  MADV_DONTNEED) == 0) {
      released.advised_bytes += r.end - r.begin;
    }
  }
  return released;
}

}  // namespace k8s_agent
