// SPDX-License-Identifier: Apache-2.0

#include "plugin/ssh/kex_offer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace k8s_agent::ssh {
namespace {

using ::testing::HasSubstr;

std::string U32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
          static_cast<char>(v >> 8), static_cast<char>(v)};
}

std::string NameList(const std::string& s) { return U32(s.size()) + s; }

// A server's banner and KEXINIT packet as on the wire.
std::string ServerHello(const std::string& kex, const std::string& host_key,
                        const std::string& cipher, const std::string& mac) {
  std::string payload = std::string(1, '\x14') + std::string(16, 'c');
  payload += NameList(kex) + NameList(host_key) + NameList(cipher) +
             NameList(cipher) + NameList(mac) + NameList(mac) +
             NameList("none") + NameList("none") + NameList("") + NameList("") +
             std::string(1, '\0') + U32(0);
  const size_t padding = 8 - (payload.size() + 5) % 8 + 8;
  std::string packet = U32(payload.size() + padding + 1) +
                       std::string(1, static_cast<char>(padding)) + payload +
                       std::string(padding, '\0');
  return "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n" + packet;
}

std::string Packet(const std::string& payload) {
  const size_t padding = 8 - (payload.size() + 5) % 8 + 4;
  return U32(payload.size() + padding + 1) +
         std::string(1, static_cast<char>(padding)) + payload +
         std::string(padding, '\0');
}

TEST(KexOfferTest, SeesTheServersNewkeys) {
  std::string hello = ServerHello("curve25519-sha256", "ssh-ed25519",
                                  "aes128-ctr", "hmac-sha2-256");
  std::string reply = Packet(std::string(1, '\x1f') + std::string(40, 'r'));
  std::string newkeys = Packet(std::string(1, '\x15'));
  EXPECT_FALSE(ServerSentNewkeys(hello));
  EXPECT_FALSE(ServerSentNewkeys(hello + reply));
  EXPECT_FALSE(ServerSentNewkeys(hello + reply.substr(0, 10)));
  EXPECT_TRUE(ServerSentNewkeys(hello + reply + newkeys));
  // Encrypted bytes after NEWKEYS are never parsed.
  EXPECT_TRUE(ServerSentNewkeys(hello + reply + newkeys + "\xff\xff\xff"));
  EXPECT_FALSE(ServerSentNewkeys("SSH-2.0-x\r\n" + U32(1u << 30) + "\x04\x15"));
  EXPECT_FALSE(ServerSentNewkeys("no banner"));
}

TEST(KexOfferTest, ParsesTheServersLists) {
  std::string hello =
      "hello first\r\n" +
      ServerHello(
          "sntrup761x25519-sha512@openssh.com,kex-strict-s-v00@openssh.com",
          "rsa-sha2-512,rsa-sha2-256", "aes128-ctr", "hmac-sha2-256");
  auto a = ParseServerKexinit(hello);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->kex,
            "sntrup761x25519-sha512@openssh.com,kex-strict-s-v00@openssh.com");
  EXPECT_EQ(a->host_key, "rsa-sha2-512,rsa-sha2-256");
  EXPECT_EQ(a->ciphers, "aes128-ctr");
  EXPECT_EQ(a->macs, "hmac-sha2-256");
  EXPECT_EQ(a->compression, "none");
}

TEST(KexOfferTest, IncompleteOrForeignInputIsNullopt) {
  std::string hello = ServerHello("a", "b", "c", "d");
  for (size_t n = 0; n < hello.size(); ++n) {
    EXPECT_FALSE(ParseServerKexinit(hello.substr(0, n)).has_value()) << n;
  }
  EXPECT_FALSE(ParseServerKexinit("HTTP/1.1 400 Bad Request\r\n\r\n"));
  std::string not_kexinit = hello;
  not_kexinit[not_kexinit.find("\r\n") + 2 + 5] = '\x15';
  EXPECT_FALSE(ParseServerKexinit(not_kexinit).has_value());
  std::string huge = "SSH-2.0-x\r\n" + U32(0x7fffffff) + std::string(64, 'x');
  EXPECT_FALSE(ParseServerKexinit(huge).has_value());
}

TEST(KexOfferTest, NamesTheFirstKindWithNothingInCommon) {
  KexAlgorithms ours{
      "curve25519-sha256,ext-info-c,kex-strict-c-v00@openssh.com",
      "ssh-ed25519,rsa-sha2-512", "aes128-ctr", "hmac-sha2-256", "none"};
  KexAlgorithms server{"curve25519-sha256", "ssh-dss", "aes256-ctr",
                       "umac-64@openssh.com", "none"};
  EXPECT_EQ(DescribeNegotiationFailure(server, ours),
            "no common host key algorithm (HostKeyAlgorithms): the server "
            "offers ssh-dss; k8s-agent supports ssh-ed25519,rsa-sha2-512");
  server.kex =
      "sntrup761x25519-sha512@openssh.com,kex-strict-s-v00@openssh.com";
  EXPECT_EQ(DescribeNegotiationFailure(server, ours),
            "no common key exchange algorithm (KexAlgorithms): the server "
            "offers sntrup761x25519-sha512@openssh.com; k8s-agent supports "
            "curve25519-sha256");
  server = ours;
  server.ciphers = "aes128-ctr";
  server.macs = "umac-64@openssh.com";
  EXPECT_THAT(DescribeNegotiationFailure(server, ours),
              HasSubstr("no common MAC (MACs): the server offers "
                        "umac-64@openssh.com;"));
  EXPECT_THAT(DescribeNegotiationFailure(ours, ours),
              HasSubstr("every kind overlaps"));
}

// A server that offers only ssh-rsa (SHA-1 signatures): libssh2 has it,
// the defaults leave it out, as ssh 9's do; ssh says "no matching host key
// type found" and -o HostKeyAlgorithms=+ssh-rsa gets through.
TEST(KexOfferTest, SaysWhatTheDefaultsLeftOutAndHowToAddItBack) {
  KexAlgorithms offered{"curve25519-sha256", "ssh-ed25519,rsa-sha2-512",
                        "aes128-ctr", "hmac-sha2-256", "none"};
  KexAlgorithms supported = offered;
  supported.host_key += ",ssh-rsa,ssh-dss";
  supported.kex += ",diffie-hellman-group14-sha1";
  KexAlgorithms server = offered;
  server.host_key = "ssh-rsa";
  EXPECT_EQ(DescribeNegotiationFailure(server, offered, supported),
            "no common host key algorithm (HostKeyAlgorithms): the server "
            "offers ssh-rsa; k8s-agent supports ssh-ed25519,rsa-sha2-512 "
            "(ssh: \"no matching host key type found. Their offer: "
            "ssh-rsa\"). ssh-rsa is left out by default, as in OpenSSH 9 "
            "(weak or SHA-1); better, give the server a stronger one, else "
            "add it back with -o HostKeyAlgorithms=+ssh-rsa");
  server = offered;
  server.kex = "diffie-hellman-group14-sha1,diffie-hellman-group1-sha1";
  EXPECT_THAT(DescribeNegotiationFailure(server, offered, supported),
              HasSubstr("no matching key exchange method found. Their offer: "
                        "diffie-hellman-group14-sha1,diffie-hellman-group1-"
                        "sha1\"). diffie-hellman-group14-sha1 is left out by "
                        "default, as in OpenSSH 9 (weak or SHA-1); better, "
                        "give the server a stronger one, else add it back "
                        "with -o KexAlgorithms=+diffie-hellman-group14-sha1"));
  // Nothing libssh2 has: no hint that cannot work.
  server = offered;
  server.host_key = "ssh-xmss@openssh.com";
  EXPECT_EQ(DescribeNegotiationFailure(server, offered, supported),
            "no common host key algorithm (HostKeyAlgorithms): the server "
            "offers ssh-xmss@openssh.com; k8s-agent supports "
            "ssh-ed25519,rsa-sha2-512");
}

}  // namespace
}  // namespace k8s_agent::ssh
