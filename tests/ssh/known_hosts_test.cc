// SPDX-License-Identifier: Apache-2.0
// Unit tests for known_hosts matching and the StrictHostKeyChecking policy.

#include "plugin/ssh/known_hosts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "plugin/base/base64.h"
#include "plugin/base/strings.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent::ssh {
namespace {

using ::testing::HasSubstr;

// A syntactically valid ed25519 public key blob.
std::string Blob(char fill) {
  std::string b("\0\0\0\x0bssh-ed25519\0\0\0\x20", 19);
  return b + std::string(32, fill);
}

TEST(FingerprintTest, Sha256Format) {
  // ssh prints SHA256 fingerprints without '=' padding.
  EXPECT_EQ(Sha256Fingerprint(std::string(32, '\0')),
            "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
}

TEST(KnownHostsNameTest, PortForm) {
  EXPECT_EQ(KnownHostsName("w0", 22), "w0");
  EXPECT_EQ(KnownHostsName("w0", 2222), "[w0]:2222");
  EXPECT_EQ(KeyBlobType(Blob('a')), "ssh-ed25519");
  EXPECT_EQ(KeyBlobType("xx"), "");
}

class KnownHostsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/known-hosts-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  static std::string Line(const std::string& hosts, char fill) {
    return hosts + " ssh-ed25519 " + Base64Encode(Blob(fill)) + "\n";
  }
  std::string dir_;
};

TEST_F(KnownHostsTest, PlainWildcardAndNegatedEntries) {
  std::string f =
      Write("kh", "# comment\n\n" + Line("[w0]:2222,10.0.0.5", 'a') +
                      Line("worker-*,!worker-9", 'b') +
                      "@cert-authority * ssh-ed25519 " +
                      Base64Encode(Blob('c')) + "\n");
  EXPECT_EQ(LookupHostKey(nullptr, {f}, "[w0]:2222", Blob('a')).status,
            HostKeyStatus::kMatch);
  EXPECT_EQ(LookupHostKey(nullptr, {f}, "10.0.0.5", Blob('a')).status,
            HostKeyStatus::kMatch);
  EXPECT_EQ(LookupHostKey(nullptr, {f}, "w0", Blob('a')).status,
            HostKeyStatus::kNotFound);  // Port 22 form is a different name.
  EXPECT_EQ(LookupHostKey(nullptr, {f}, "worker-3", Blob('b')).status,
            HostKeyStatus::kMatch);
  EXPECT_EQ(LookupHostKey(nullptr, {f}, "worker-9", Blob('b')).status,
            HostKeyStatus::kNotFound);
  HostKeyLookup m = LookupHostKey(nullptr, {f}, "worker-3", Blob('z'));
  EXPECT_EQ(m.status, HostKeyStatus::kMismatch);
  EXPECT_EQ(m.file, f);
  EXPECT_EQ(m.line, 4);
  // A cert-authority line is not a host key.
  EXPECT_EQ(LookupHostKey(nullptr, {f}, "x", Blob('c')).status,
            HostKeyStatus::kNotFound);
}

TEST_F(KnownHostsTest, MatchAnywhereBeatsMismatchAndRevokedBeatsAll) {
  std::string a = Write("a", Line("w0", 'x'));
  std::string b = Write("b", Line("w0", 'y'));
  EXPECT_EQ(LookupHostKey(nullptr, {a, b}, "w0", Blob('y')).status,
            HostKeyStatus::kMatch);
  std::string r =
      Write("r", "@revoked * ssh-ed25519 " + Base64Encode(Blob('y')) + "\n");
  EXPECT_EQ(LookupHostKey(nullptr, {a, b, r}, "w0", Blob('y')).status,
            HostKeyStatus::kRevoked);
}

TEST_F(KnownHostsTest, PolicyYesRefusesUnknown) {
  std::string f = Write("kh", "");
  Status s = VerifyHostKey(nullptr, StrictHostKeyChecking::kYes, {f}, "w0",
                           "10.0.0.5", 22, Blob('a'), "SHA256:abc");
  EXPECT_THAT(s, StatusIs(Code::kFailedPrecondition, "SHA256:abc"));
  EXPECT_THAT(s.message(), HasSubstr("accept-new"));
}

TEST_F(KnownHostsTest, MismatchRefusedUnderEveryPolicy) {
  std::string f = Write("kh", Line("other", 'q') + Line("w0", 'a'));
  for (auto policy :
       {StrictHostKeyChecking::kYes, StrictHostKeyChecking::kAcceptNew,
        StrictHostKeyChecking::kNo}) {
    Status s = VerifyHostKey(nullptr, policy, {f}, "w0", "10.0.0.5", 22,
                             Blob('b'), "SHA256:new");
    EXPECT_THAT(s, StatusIs(Code::kFailedPrecondition, f + ":2"));
    EXPECT_THAT(s.message(), HasSubstr("SHA256:new"));
    EXPECT_THAT(s.message(), HasSubstr("ssh-keygen -R 'w0' -f " + f));
  }
}

TEST_F(KnownHostsTest, MatchUnderIpIsAccepted) {
  std::string f = Write("kh", Line("[10.0.0.5]:2222", 'a'));
  EXPECT_THAT(VerifyHostKey(nullptr, StrictHostKeyChecking::kYes, {f}, "w0",
                            "10.0.0.5", 2222, Blob('a'), "fp"),
              IsOk());
}

TEST_F(KnownHostsTest, AcceptNewAppendsOnceAndCreatesDirectory) {
  std::string f = dir_ + "/sub/known_hosts";
  for (int i = 0; i < 2; ++i) {
    EXPECT_THAT(VerifyHostKey(nullptr, StrictHostKeyChecking::kAcceptNew, {f},
                              "w0", "10.0.0.5", 2222, Blob('a'), "fp"),
                IsOk());
  }
  auto text = ReadFileToString(f);
  ASSERT_THAT(text.status(), IsOk());
  EXPECT_EQ(*text, Line("[w0]:2222", 'a'));
  EXPECT_THAT(VerifyHostKey(nullptr, StrictHostKeyChecking::kYes, {f}, "w0",
                            "10.0.0.5", 2222, Blob('a'), "fp"),
              IsOk());
}

TEST_F(KnownHostsTest, AppendAddsMissingNewline) {
  std::string f = Write("kh", "# no newline");
  ASSERT_THAT(AppendKnownHost(f, "w1", Blob('a')), IsOk());
  EXPECT_EQ(*ReadFileToString(f), "# no newline\n" + Line("w1", 'a'));
}

TEST_F(KnownHostsTest, NoPolicyWithDevNullWritesNothing) {
  EXPECT_THAT(VerifyHostKey(nullptr, StrictHostKeyChecking::kNo, {"/dev/null"},
                            "w0", "10.0.0.5", 22, Blob('a'), "fp"),
              IsOk());
}

TEST_F(KnownHostsTest, KnownKeyTypesForHostKeyPreference) {
  std::string f =
      Write("kh", Line("w0", 'a') + "w0 ssh-rsa AAAAB3NzaC1yc2EAAAA=\n" +
                      "w1 ecdsa-sha2-nistp256 AAAA\n");
  EXPECT_THAT(KnownKeyTypes({f}, {"w0"}),
              ::testing::ElementsAre("ssh-ed25519", "ssh-rsa"));
}

}  // namespace
}  // namespace k8s_agent::ssh
