// SPDX-License-Identifier: Apache-2.0
// Algorithm lists: OpenSSH 9's defaults, the +/-/^ edits, libssh2 filtering.

#include "plugin/ssh/algorithms.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugin/ssh/libssh2_algorithms.h"
#include "plugin/ssh/ssh_options.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent::ssh {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// Fixed input, not the linked library's: libssh2 1.10's lists, as its
// libssh2_session_supported_algs reported them (the build links 1.11.1).
const std::vector<std::string> kLibssh2Kex = {
    "curve25519-sha256",
    "curve25519-sha256@libssh.org",
    "ecdh-sha2-nistp256",
    "ecdh-sha2-nistp384",
    "ecdh-sha2-nistp521",
    "diffie-hellman-group-exchange-sha256",
    "diffie-hellman-group16-sha512",
    "diffie-hellman-group18-sha512",
    "diffie-hellman-group14-sha256",
    "diffie-hellman-group14-sha1",
    "diffie-hellman-group1-sha1",
    "diffie-hellman-group-exchange-sha1"};
const std::vector<std::string> kLibssh2Ciphers = {
    "aes128-ctr", "aes192-ctr",  "aes256-ctr",   "aes256-cbc",
    "aes192-cbc", "aes128-cbc",  "blowfish-cbc", "arcfour128",
    "arcfour",    "cast128-cbc", "3des-cbc"};

TEST(AlgorithmsTest, DefaultsAreOpenSsh9sNotLibssh2s) {
  // Given no Ciphers/KexAlgorithms/MACs/HostKeyAlgorithms, expect what
  // ssh offers: no CBC, no SHA-1 key exchange, no MD5, no ssh-rsa/dss.
  StatusOr<ResolvedSshOptions> r = Resolve(SshOptions{}, "w0");
  ASSERT_THAT(r, IsOk());
  EXPECT_THAT(r->algorithms.ciphers, Not(Contains("aes128-cbc")));
  EXPECT_THAT(r->algorithms.ciphers, Not(Contains("3des-cbc")));
  EXPECT_THAT(r->algorithms.ciphers, Contains("aes128-ctr"));
  EXPECT_THAT(r->algorithms.kex, Not(Contains("diffie-hellman-group14-sha1")));
  EXPECT_THAT(r->algorithms.kex, Not(Contains("diffie-hellman-group1-sha1")));
  EXPECT_THAT(r->algorithms.kex, Contains("curve25519-sha256"));
  EXPECT_THAT(r->algorithms.macs, Not(Contains("hmac-md5")));
  EXPECT_THAT(r->algorithms.host_keys, Not(Contains("ssh-rsa")));
  EXPECT_THAT(r->algorithms.host_keys, Not(Contains("ssh-dss")));

  StatusOr<std::string> pref = Libssh2Preference(
      AlgorithmKind::kCipher, r->algorithms.ciphers, kLibssh2Ciphers);
  ASSERT_THAT(pref, IsOk());
  EXPECT_EQ(*pref, "aes128-ctr,aes192-ctr,aes256-ctr");
  pref = Libssh2Preference(AlgorithmKind::kKex, r->algorithms.kex, kLibssh2Kex);
  ASSERT_THAT(pref, IsOk());
  EXPECT_THAT(*pref, Not(HasSubstr("sha1")));
  EXPECT_THAT(*pref, HasSubstr("curve25519-sha256,"));
}

TEST(AlgorithmsTest, SshConfigEditsTheDefaults) {
  auto spec = [](const std::string& s) {
    return ApplyAlgorithmSpec(AlgorithmKind::kCipher, s);
  };
  EXPECT_THAT(*spec("aes128-cbc"), ElementsAre("aes128-cbc"));
  EXPECT_EQ(spec("+aes128-cbc")->back(), "aes128-cbc");
  EXPECT_EQ(spec("^aes128-cbc")->front(), "aes128-cbc");
  EXPECT_THAT(*spec("-aes*-ctr"), Not(Contains("aes192-ctr")));
  EXPECT_THAT(*spec("-aes*-ctr"), Contains("chacha20-poly1305@openssh.com"));
  EXPECT_THAT(spec(""), StatusIs(Code::kInvalidArgument, "Ciphers"));
  EXPECT_THAT(spec("+"), StatusIs(Code::kInvalidArgument, "empty"));
  EXPECT_THAT(spec("a,,b"), StatusIs(Code::kInvalidArgument, "empty"));
  EXPECT_THAT(spec("-*"), StatusIs(Code::kInvalidArgument, "nothing left"));
}

TEST(AlgorithmsTest, OptionsCarryTheSpecsFirstWins) {
  // Given -o Ciphers=+aes128-cbc then an ssh_config Ciphers line, expect
  // the command line to win, as in ssh, and bad values refused.
  SshOptions o;
  EXPECT_THAT(ApplySshOption("Ciphers", "+aes128-cbc", &o), IsOk());
  EXPECT_THAT(ApplySshOption("ciphers", "aes256-ctr", &o), IsOk());
  EXPECT_THAT(
      ApplySshOption("KexAlgorithms", "diffie-hellman-group14-sha1", &o),
      IsOk());
  EXPECT_THAT(ApplySshOption("MACs", "", &o),
              StatusIs(Code::kInvalidArgument, "MACs"));
  StatusOr<ResolvedSshOptions> r = Resolve(o, "w0");
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->algorithms.ciphers.back(), "aes128-cbc");
  EXPECT_THAT(r->algorithms.kex, ElementsAre("diffie-hellman-group14-sha1"));
  StatusOr<std::string> pref =
      Libssh2Preference(AlgorithmKind::kKex, r->algorithms.kex, kLibssh2Kex);
  ASSERT_THAT(pref, IsOk());
  EXPECT_THAT(*pref, HasSubstr("diffie-hellman-group14-sha1"));
}

TEST(AlgorithmsTest, NothingLibssh2ImplementsIsAClearError) {
  StatusOr<std::string> pref =
      Libssh2Preference(AlgorithmKind::kCipher,
                        {"chacha20-poly1305@openssh.com"}, kLibssh2Ciphers);
  EXPECT_THAT(pref, StatusIs(Code::kFailedPrecondition,
                             "Ciphers chacha20-poly1305@openssh.com: none of "
                             "these is implemented by libssh2"));
  EXPECT_THAT(pref.status().message(), HasSubstr("aes128-ctr"));
}

}  // namespace
}  // namespace k8s_agent::ssh
