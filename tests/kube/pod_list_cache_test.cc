// SPDX-License-Identifier: Apache-2.0
// Where the shared pod lists go: the user's cache, or a private directory
// under TMPDIR when a locked-down pod leaves HOME unwritable.

#include "plugin/kube/pod_list_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace k8s_agent::kube {
namespace {

class SharedPodListDirTest : public ::testing::Test {
 protected:
  SharedPodListDirTest() {
    char tmpl[] = "/tmp/k8s-pod-list-dir-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    ::mkdir((dir_ + "/tmp").c_str(), 01777);
    // A HOME whose cache cannot be made: a file where a directory would go
    // (a read-only root refuses the mkdir as well, but not to root).
    std::ofstream(dir_ + "/home-file") << "x";
  }
  ~SharedPodListDirTest() override { std::filesystem::remove_all(dir_); }

  std::string Fallback() const {
    return dir_ + "/tmp/k8s-agent-" + std::to_string(::geteuid()) + "-pods";
  }
  static mode_t Mode(const std::string& path) {
    struct stat st {};
    ::lstat(path.c_str(), &st);
    return st.st_mode & 07777;
  }

  std::string dir_;
};

TEST_F(SharedPodListDirTest, TheUsersCacheWhenItCanBeMadePrivate) {
  std::string cache = dir_ + "/home/.kube/cache/k8s-agent";
  EXPECT_EQ(SharedPodListDir(cache, dir_ + "/tmp"), cache + "/pods");
  EXPECT_EQ(Mode(cache + "/pods"), 0700u);
  EXPECT_FALSE(std::filesystem::exists(Fallback()));
}

TEST_F(SharedPodListDirTest, AnUnwritableHomeFallsBackToAPrivateTmpDir) {
  std::string cache = dir_ + "/home-file/.kube/cache/k8s-agent";
  EXPECT_EQ(SharedPodListDir(cache, dir_ + "/tmp"), Fallback());
  EXPECT_EQ(Mode(Fallback()), 0700u);
  // No HOME at all: the same.
  EXPECT_EQ(SharedPodListDir("", dir_ + "/tmp"), Fallback());
}

TEST_F(SharedPodListDirTest, AWideFallbackOfOursIsNarrowed) {
  ASSERT_EQ(::mkdir(Fallback().c_str(), 0777), 0);
  ::chmod(Fallback().c_str(), 0777);
  EXPECT_EQ(SharedPodListDir("", dir_ + "/tmp"), Fallback());
  EXPECT_EQ(Mode(Fallback()), 0700u);
}

TEST_F(SharedPodListDirTest, AFallbackPlantedByAnotherIsRefused) {
  // A symlink to a directory someone else controls: never followed.
  ::mkdir((dir_ + "/elsewhere").c_str(), 0700);
  ASSERT_EQ(::symlink((dir_ + "/elsewhere").c_str(), Fallback().c_str()), 0);
  EXPECT_EQ(SharedPodListDir("", dir_ + "/tmp"), "");
}

TEST_F(SharedPodListDirTest, AnotherUsersFallbackIsRefused) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "needs root to make another uid's directory";
  ASSERT_EQ(::mkdir(Fallback().c_str(), 0700), 0);
  ASSERT_EQ(::chown(Fallback().c_str(), 65534, 65534), 0);
  EXPECT_EQ(SharedPodListDir("", dir_ + "/tmp"), "");
}

TEST_F(SharedPodListDirTest, ARelativeTmpDirIsNotUsed) {
  EXPECT_EQ(SharedPodListDir("", "tmp"), "");
}

}  // namespace
}  // namespace k8s_agent::kube
