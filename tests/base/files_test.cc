// SPDX-License-Identifier: Apache-2.0
#include "plugin/base/files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "plugin/base/strings.h"

namespace k8s_agent {
namespace {

class FilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/k8s-files-test.XXXXXX";
    dir_ = mkdtemp(templ);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(stat(path.c_str(), &st), 0);
  return st.st_mode & 07777;
}

TEST_F(FilesTest, WriteReplacesWithTheModeDespiteTheUmask) {
  std::string path = dir_ + "/f";
  mode_t old = umask(077);
  ASSERT_TRUE(WriteFileAtomically(path, "one", 0644).ok());
  ASSERT_TRUE(WriteFileAtomically(path, "two", 0755).ok());
  umask(old);
  EXPECT_EQ(*ReadFileToString(path), "two");
  EXPECT_EQ(ModeOf(path), 0755u);
  EXPECT_NE(access((path + ".tmp." + std::to_string(getpid())).c_str(), F_OK),
            0);
}

TEST_F(FilesTest, CopyStreamsAndFailuresLeaveNoTemporary) {
  std::string big(200000, 'x');
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/src", big, 0600).ok());
  ASSERT_TRUE(CopyFileAtomically(dir_ + "/src", dir_ + "/dst", 0640).ok());
  EXPECT_EQ(*ReadFileToString(dir_ + "/dst"), big);
  EXPECT_EQ(ModeOf(dir_ + "/dst"), 0640u);
  Status missing = CopyFileAtomically(dir_ + "/none", dir_ + "/dst2", 0600);
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find(dir_ + "/none"), std::string::npos);
  Status bad_dir = WriteFileAtomically(dir_ + "/no/such/f", "x", 0600);
  EXPECT_FALSE(bad_dir.ok());
}

TEST(JoinPathTest, RootIsNotDoubled) {
  EXPECT_EQ(JoinPath("/", "k8s-agent"), "/k8s-agent");
  EXPECT_EQ(JoinPath("/opt/k", "sshd"), "/opt/k/sshd");
}

TEST(SelfExeDirTest, IsADirectoryHoldingThisTest) {
  auto dir = SelfExeDir();
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ((*dir)[0], '/');
  struct stat st {};
  EXPECT_EQ(stat(dir->c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
}

}  // namespace
}  // namespace k8s_agent
