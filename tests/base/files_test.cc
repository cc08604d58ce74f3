// SPDX-License-Identifier: Apache-2.0
#include "plugin/base/files.h"

#include <fcntl.h>
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

ino_t InodeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0);
  return st.st_ino;
}

// A re-delivery over a kept emptyDir: what is already there as it would be
// written stays (the same inode); any difference is written afresh.
TEST_F(FilesTest, CopyIfChangedWritesOnlyWhatDiffers) {
  std::string src = dir_ + "/src", dst = dir_ + "/dst";
  ASSERT_TRUE(WriteFileAtomically(src, std::string(100000, 'a'), 0600).ok());
  ASSERT_EQ(*CopyFileIfChanged(src, dst, 0755), true);
  ino_t first = InodeOf(dst);
  ASSERT_EQ(*CopyFileIfChanged(src, dst, 0755), false);
  EXPECT_EQ(InodeOf(dst), first);
  // Another mode alone is set in place; the same size with one byte
  // changed, or another size, is a new copy.
  EXPECT_EQ(*CopyFileIfChanged(src, dst, 0644), false);
  EXPECT_EQ(ModeOf(dst), 0644u);
  EXPECT_EQ(InodeOf(dst), first);
  ASSERT_TRUE(
      WriteFileAtomically(dst, std::string(99999, 'a') + "b", 0644).ok());
  EXPECT_EQ(*CopyFileIfChanged(src, dst, 0644), true);
  EXPECT_EQ(*ReadFileToString(dst), std::string(100000, 'a'));
  ASSERT_TRUE(WriteFileAtomically(dst, "a", 0644).ok());
  EXPECT_EQ(*CopyFileIfChanged(src, dst, 0644), true);
  EXPECT_EQ(ReadFileToString(dst)->size(), 100000u);
  // A symlink to an identical file, or a second name for it, is replaced:
  // whoever made it could change what it points at.
  std::string twin = dir_ + "/twin";
  ASSERT_TRUE(CopyFileAtomically(src, twin, 0644).ok());
  ASSERT_EQ(unlink(dst.c_str()), 0);
  ASSERT_EQ(symlink(twin.c_str(), dst.c_str()), 0);
  EXPECT_EQ(*CopyFileIfChanged(src, dst, 0644), true);
  struct stat st {};
  ASSERT_EQ(lstat(dst.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  ASSERT_EQ(unlink(dst.c_str()), 0);
  ASSERT_EQ(link(twin.c_str(), dst.c_str()), 0);
  EXPECT_EQ(*CopyFileIfChanged(src, dst, 0644), true);
  EXPECT_NE(InodeOf(dst), InodeOf(twin));
}

// Another user who can write the directory plants a symlink where the
// temporary goes (the pid-named one was predictable: PID 1 in a container).
TEST_F(FilesTest, PlantedSymlinksAreNeverWrittenThrough) {
  std::string victim = dir_ + "/victim";
  ASSERT_TRUE(WriteFileAtomically(victim, "secret", 0600).ok());
  std::string path = dir_ + "/authorized_keys";
  std::string old_temp = path + ".tmp." + std::to_string(getpid());
  ASSERT_EQ(symlink(victim.c_str(), old_temp.c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(path, "keys", 0600).ok());
  EXPECT_EQ(*ReadFileToString(victim), "secret");
  EXPECT_EQ(*ReadFileToString(path), "keys");
  // A symlink at the name itself is replaced, not followed.
  std::string link = dir_ + "/config";
  ASSERT_EQ(symlink(victim.c_str(), link.c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(link, "cfg", 0600).ok());
  ASSERT_TRUE(CopyFileAtomically(path, old_temp, 0600).ok());
  EXPECT_EQ(*ReadFileToString(victim), "secret");
  struct stat st {};
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  // No temporary (a dot file) is left behind.
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    EXPECT_NE(e.path().filename().string()[0], '.') << e.path();
    ++entries;
  }
  EXPECT_EQ(entries, 4);
}

TEST_F(FilesTest, RemoveTreeFollowsNoSymlink) {
  std::string outside = dir_ + "/outside";
  ASSERT_EQ(mkdir(outside.c_str(), 0700), 0);
  ASSERT_TRUE(WriteFileAtomically(outside + "/keep", "k", 0600).ok());
  std::string tree = dir_ + "/tree";
  ASSERT_EQ(mkdir(tree.c_str(), 0700), 0);
  ASSERT_EQ(mkdir((tree + "/a").c_str(), 0700), 0);
  ASSERT_TRUE(WriteFileAtomically(tree + "/a/f", "f", 0600).ok());
  ASSERT_EQ(symlink(outside.c_str(), (tree + "/a/out").c_str()), 0);
  ASSERT_EQ(symlink(outside.c_str(), (dir_ + "/link").c_str()), 0);
  auto dirfd = OpenDirNoFollow(dir_);
  ASSERT_TRUE(dirfd.ok());
  ASSERT_TRUE(RemoveTreeAt(dirfd->get(), dir_, "tree").ok());
  ASSERT_TRUE(RemoveTreeAt(dirfd->get(), dir_, "link").ok());
  ASSERT_TRUE(RemoveTreeAt(dirfd->get(), dir_, "missing").ok());
  EXPECT_NE(access(tree.c_str(), F_OK), 0);
  EXPECT_EQ(*ReadFileToString(outside + "/keep"), "k");
  EXPECT_FALSE(OpenDirNoFollow(dir_ + "/link").ok());
  ASSERT_EQ(symlink(outside.c_str(), (dir_ + "/link").c_str()), 0);
  Status refused = OpenDirNoFollow(dir_ + "/link").status();
  EXPECT_NE(refused.message().find("symlink"), std::string::npos)
      << refused.message();
}

// What a session user can leave in their part of a kept run directory: a
// tree deeper than the removal descends at once. It goes, all of it.
TEST_F(FilesTest, RemoveTreeRemovesAnyDepth) {
  std::string tree = dir_ + "/tree";
  ASSERT_EQ(mkdir(tree.c_str(), 0700), 0);
  auto top = OpenDirNoFollow(tree);
  ASSERT_TRUE(top.ok());
  int fd = dup(top->get());
  for (int i = 0; i < 150; ++i) {  // Twice past the depth it descends at once.
    ASSERT_EQ(mkdirat(fd, "dddddddddddddddddddd", 0700), 0) << i;
    ASSERT_EQ(mknodat(fd, "f", S_IFREG | 0600, 0), 0);
    int next = openat(fd, "dddddddddddddddddddd", O_RDONLY | O_DIRECTORY);
    ASSERT_GE(next, 0);
    close(fd);
    fd = next;
  }
  close(fd);
  auto parent = OpenDirNoFollow(dir_);
  ASSERT_TRUE(parent.ok());
  Status removed = RemoveTreeAt(parent->get(), dir_, "tree");
  ASSERT_TRUE(removed.ok()) << removed.message();
  EXPECT_NE(access(tree.c_str(), F_OK), 0);
  EXPECT_TRUE(std::filesystem::is_empty(dir_)) << "a .deep. directory left";
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
