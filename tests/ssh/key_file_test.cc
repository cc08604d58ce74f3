// SPDX-License-Identifier: Apache-2.0

#include "plugin/ssh/key_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace k8s_agent::ssh {
namespace {

using ::testing::HasSubstr;

// Throwaway keys made for this test with ssh-keygen -t ed25519 (the second
// with passphrase "pw").
constexpr const char* kEd25519 =
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACC91MNf1C8S2ZYp4ZdxR4Ml7xQhSAoQrVngA2mKoUtSKQAAAIi9d/2DvXf9\n"
    "gwAAAAtzc2gtZWQyNTUxOQAAACC91MNf1C8S2ZYp4ZdxR4Ml7xQhSAoQrVngA2mKoUtSKQ\n"
    "AAAEAUa46anJ035VY33BZKVKrqd4FoxAOQ1g1UW20xNlsMfL3Uw1/ULxLZlinhl3FHgyXv\n"
    "FCFIChCtWeADaYqhS1IpAAAAAXQBAgME\n"
    "-----END OPENSSH PRIVATE KEY-----\n";
constexpr const char* kEd25519Encrypted =
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAACmFlczI1Ni1jdHIAAAAGYmNyeXB0AAAAGAAAABDXo3n/s9\n"
    "0Il7G6UUXhY042AAAAEAAAAAEAAAAzAAAAC3NzaC1lZDI1NTE5AAAAIFYTjBUd8S6Z6+Mw\n"
    "rOB+MycY9WmbJd1KF1F/cQo0GsfrAAAAkLYRoGPeE9Pk8OrnWq1egif6kKrecRYJYw9XFd\n"
    "M5XsOCOWymeA4IWFZwoMDSf72ElxSV2WG7c1y9+wWopTIsbI7WdDDRj3LHsUGzT3MbcuDz\n"
    "3q0dfq0HYPCaxVwft9P2IztZwieJnWJba1mMjmLZjFTdUnH/p9Pb/lFqi/gsjFXPmN336j\n"
    "awAVkxHFfX1B3R3w==\n"
    "-----END OPENSSH PRIVATE KEY-----\n";

TEST(KeyFileTest, OpenSshFormatTypeAndCipherWithoutThePassphrase) {
  PrivateKeyInfo plain = InspectPrivateKey(kEd25519);
  EXPECT_TRUE(plain.recognized);
  EXPECT_FALSE(plain.encrypted);
  EXPECT_EQ(plain.type, "ssh-ed25519");
  EXPECT_EQ(UnusableKeyReason(plain), "");

  PrivateKeyInfo enc = InspectPrivateKey(kEd25519Encrypted);
  EXPECT_TRUE(enc.recognized);
  EXPECT_TRUE(enc.encrypted);
  EXPECT_EQ(enc.type, "ssh-ed25519");
  EXPECT_THAT(UnusableKeyReason(enc), HasSubstr("passphrase-protected"));
}

TEST(KeyFileTest, PemHeaders) {
  PrivateKeyInfo rsa = InspectPrivateKey(
      "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n");
  EXPECT_TRUE(rsa.recognized);
  EXPECT_FALSE(rsa.encrypted);
  EXPECT_EQ(rsa.type, "ssh-rsa");
  PrivateKeyInfo rsa_enc = InspectPrivateKey(
      "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n"
      "DEK-Info: AES-128-CBC,00\n\nMIIE\n-----END RSA PRIVATE KEY-----\n");
  EXPECT_TRUE(rsa_enc.encrypted);
  PrivateKeyInfo dsa = InspectPrivateKey(
      "-----BEGIN DSA PRIVATE KEY-----\nMIIB\n-----END DSA PRIVATE KEY-----\n");
  EXPECT_THAT(UnusableKeyReason(dsa), HasSubstr("DSA keys are not supported"));
  PrivateKeyInfo pkcs8 = InspectPrivateKey(
      "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n"
      "-----END ENCRYPTED PRIVATE KEY-----\n");
  EXPECT_TRUE(pkcs8.encrypted);
}

TEST(KeyFileTest, GarbageIsNotRecognized) {
  for (const char* text : {"", "ssh-ed25519 AAAA comment\n"}) {
    PrivateKeyInfo k = InspectPrivateKey(text);
    EXPECT_FALSE(k.recognized) << text;
    EXPECT_FALSE(k.corrupt) << text;
    EXPECT_THAT(UnusableKeyReason(k), HasSubstr("not a private key")) << text;
  }
}

TEST(KeyFileTest, AnOpenSshKeyWithABrokenBodyIsCorrupt) {
  for (const char* text :
       {"-----BEGIN OPENSSH PRIVATE KEY-----\n!!!\n"
        "-----END OPENSSH PRIVATE KEY-----\n",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5v\n"
        "-----END OPENSSH PRIVATE KEY-----\n",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA"}) {
    PrivateKeyInfo k = InspectPrivateKey(text);
    EXPECT_FALSE(k.recognized) << text;
    EXPECT_TRUE(k.corrupt) << text;
    EXPECT_THAT(UnusableKeyReason(k), HasSubstr("corrupt")) << text;
  }
  EXPECT_FALSE(InspectPrivateKey(kEd25519).corrupt);
}

TEST(KeyFileTest, SecurityKeysAreUnsupported) {
  PrivateKeyInfo sk{true, false, "sk-ssh-ed25519@openssh.com"};
  EXPECT_THAT(UnusableKeyReason(sk), HasSubstr("security-key"));
}

}  // namespace
}  // namespace k8s_agent::ssh
