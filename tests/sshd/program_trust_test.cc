// SPDX-License-Identifier: Apache-2.0
#include "plugin/sshd/program_trust.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugin/base/files.h"
#include "tests/sshd/secret_dir.h"

namespace k8s_agent::sshd {
namespace {

using ::testing::HasSubstr;

// The delivery emptyDir as the kubelet makes it (0777, no sticky bit),
// mounted writable into the worker container: the session user can rename
// a program root runs and put their own in its place.
TEST(ProgramTrustTest, AWritableDeliveryDirIsWarnedOf) {
  SecretDir s;
  std::string dir = s.root() + "/opt";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  for (const char* name : {"sshd", "sshd-session"}) {
    ASSERT_TRUE(WriteFileAtomically(dir + "/" + name, "#!", 0755).ok());
  }
  std::vector<std::string> programs = {dir + "/sshd", dir + "/sshd-session"};
  SessionUser nobody{"nobody", 65534, 65534, "/nonexistent", "/bin/sh"};
  EXPECT_EQ(ReplaceableProgramWarning(programs, nobody), "");
  ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
  std::string warning = ReplaceableProgramWarning(programs, nobody);
  EXPECT_THAT(warning, HasSubstr(dir + " can be written by group or others"));
  EXPECT_THAT(warning, HasSubstr("could replace " + dir + "/sshd,"));
  EXPECT_THAT(warning, HasSubstr("readOnly: true"));
  // Serving oneself: nothing to guard against.
  SessionUser me{"me", geteuid(), getegid(), "/", "/bin/sh"};
  EXPECT_EQ(ReplaceableProgramWarning(programs, me), "");
  // Sticky: only the files' owner (not nobody) may rename them.
  ASSERT_EQ(chmod(dir.c_str(), 01777), 0);
  EXPECT_EQ(ReplaceableProgramWarning(programs, nobody), "");
  ASSERT_EQ(chmod((dir + "/sshd-session").c_str(), 0777), 0);
  EXPECT_THAT(ReplaceableProgramWarning(programs, nobody),
              HasSubstr(dir + "/sshd-session can be written"));
}

}  // namespace
}  // namespace k8s_agent::sshd
