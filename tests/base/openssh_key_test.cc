// SPDX-License-Identifier: Apache-2.0
// The openssh-key-v1 parser the agent's key check and the sshd wrapper's
// Secret check share: real ssh-keygen keys, then each way a body breaks.

#include "plugin/base/openssh_key.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "plugin/base/base64.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent {
namespace {

// Throwaway keys made for this test with ssh-keygen 9.2 (-N '' -C t; the
// encrypted one with -N pw), each with its .pub file's base64.
constexpr const char* kEd25519 =
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACDC0J9zSl83yPtIgx/HArpVLSFP4CWziXJwfFRIlkGEAQAAAIhhZXoRYWV6\n"
    "EQAAAAtzc2gtZWQyNTUxOQAAACDC0J9zSl83yPtIgx/HArpVLSFP4CWziXJwfFRIlkGEAQ\n"
    "AAAEAfSWXcLnr8Mki4rbHxqJ3WetezQpyv1FDjaO6x3ebp78LQn3NKXzfI+0iDH8cCulUt\n"
    "IU/gJbOJcnB8VEiWQYQBAAAAAXQBAgME\n"
    "-----END OPENSSH PRIVATE KEY-----\n";
constexpr const char* kEd25519Pub =
    "AAAAC3NzaC1lZDI1NTE5AAAAIMLQn3NKXzfI+0iDH8cCulUtIU/gJbOJcnB8VEiWQYQB";

constexpr const char* kEd25519Encrypted =
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAACmFlczI1Ni1jdHIAAAAGYmNyeXB0AAAAGAAAABCoUtr4He\n"
    "jq9dG40WyZ+hIBAAAAEAAAAAEAAAAzAAAAC3NzaC1lZDI1NTE5AAAAIOndcp0YCc70klaN\n"
    "puYNNy/BB2ihdM0rtw33eyCoWcOmAAAAkBnlD5SEkU7uD0Gf2C7lwRNS2jui3BLeZsfe/4\n"
    "KJHfiXbaMchMhfCpHlXMctvnDNr/upV1V6ELqyifTepff50DyoIQur9X8DFGPBxUXnatAZ\n"
    "z7y5iixc2ZfTDc6r5ItRj2hpC9jAE8DFqTVYkbMgjC18WWViA829O9ngohyubQL9PXHDqE\n"
    "6S3H9Ca1abUcVTAQ==\n"
    "-----END OPENSSH PRIVATE KEY-----\n";
constexpr const char* kEd25519EncryptedPub =
    "AAAAC3NzaC1lZDI1NTE5AAAAIOndcp0YCc70klaNpuYNNy/BB2ihdM0rtw33eyCoWcOm";

constexpr const char* kRsa1024 =
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAlwAAAAdzc2gtcn\n"
    "NhAAAAAwEAAQAAAIEAsgA3euRXJZcjIb+7drqyJ1eYxwPTf/Ou6Rd7JLry0+9QWsQM4kab\n"
    "8bMsTk29AgleCY8hJev99XfnIZR++XE98pJX/tCn0YnaLDn54ZsHmPiyEqK8GP0yADFHBR\n"
    "Cpj42xuQ3hLi9fUKqAR9/ShMoMxq1d8l3E+cIp5m3Pm9ZQajUAAAH4YknfpGJJ36QAAAAH\n"
    "c3NoLXJzYQAAAIEAsgA3euRXJZcjIb+7drqyJ1eYxwPTf/Ou6Rd7JLry0+9QWsQM4kab8b\n"
    "MsTk29AgleCY8hJev99XfnIZR++XE98pJX/tCn0YnaLDn54ZsHmPiyEqK8GP0yADFHBRCp\n"
    "j42xuQ3hLi9fUKqAR9/ShMoMxq1d8l3E+cIp5m3Pm9ZQajUAAAADAQABAAAAgEwyF429rS\n"
    "hkOB+8SW0boiOBNd8LXkAJejhBWu9wL35VlRoljjZWb27Zef/S+zOh+uUwpcnr6XxoZUJU\n"
    "pL32ocM759oh/jAnHtq2KDZcXJivf0rrgVDTlg2ruH3PQa7o4ZpKKvIKtLvIsas916ozs/\n"
    "vR2JnJa73zIV/DKSLj+59JAAAAQCd6kCevvk9oq7bHK3uD7gxrcFX1GgkRnLr3Mp3q6D8N\n"
    "jN7fo8DJJoln4FoGALU1xrIX5ZnBzLpA8/LwH9USgg4AAABBANhTLvjamWOkR4MNje5gE+\n"
    "mZYBofEVhjEJveodu5UDEw4K028oeaXX7fMRFMUQyk0E/wxaM5oOgSfE/KSeD2YUsAAABB\n"
    "ANKlp0FXaTHYXG2/lxF/fKBaP9u+CsGi2XKjmLOMA59LpwxtdPcUOcTGOr8YIgGR8WJU/w\n"
    "LNa3D01wNilG9Qsn8AAAABdAEC\n"
    "-----END OPENSSH PRIVATE KEY-----\n";
constexpr const char* kRsa1024Pub =
    "AAAAB3NzaC1yc2EAAAADAQABAAAAgQCyADd65FcllyMhv7t2urInV5jHA9N/867pF3skuvLT"
    "71BaxAziRpvxsyxOTb0CCV4JjyEl6/31d+chlH75cT3yklf+0KfRidosOfnhmweY+LISorwY"
    "/TIAMUcFEKmPjbG5DeEuL19QqoBH39KEygzGrV3yXcT5winmbc+b1lBqNQ==";

constexpr const char* kEcdsa256 =
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAaAAAABNlY2RzYS\n"
    "1zaGEyLW5pc3RwMjU2AAAACG5pc3RwMjU2AAAAQQQvarPdvczOQ/VCmED0Pgqn6rUx6uuh\n"
    "ekV0lQh3XtBAuiXwvmtdi3gQ/llVpmzpJ3+b1N/fwZ+DEj/ja8F2LTJsAAAAoLr4+G26+P\n"
    "htAAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBC9qs929zM5D9UKY\n"
    "QPQ+CqfqtTHq66F6RXSVCHde0EC6JfC+a12LeBD+WVWmbOknf5vU39/Bn4MSP+NrwXYtMm\n"
    "wAAAAgfQZut5WBKnJk4liO5uWdZbgN6ok/Yk9NanMzXI9AHSMAAAABdAECAwQFBgc=\n"
    "-----END OPENSSH PRIVATE KEY-----\n";
constexpr const char* kEcdsa256Pub =
    "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBC9qs929zM5D9UKYQPQ+"
    "CqfqtTHq66F6RXSVCHde0EC6JfC+a12LeBD+WVWmbOknf5vU39/Bn4MSP+NrwXYtMmw=";

// The decoded body of an armoured key (the fixtures above are valid).
std::string Body(std::string_view text) {
  size_t begin = text.find('\n') + 1;
  return *Base64Decode(text.substr(begin, text.find("-----END") - begin));
}

std::string Armour(std::string_view raw) {
  return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + Base64Encode(raw) +
         "\n-----END OPENSSH PRIVATE KEY-----\n";
}

std::string Wire(std::string_view s) {
  uint32_t n = static_cast<uint32_t>(s.size());
  return std::string{
             static_cast<char>(n >> 24), static_cast<char>((n >> 16) & 0xff),
             static_cast<char>((n >> 8) & 0xff), static_cast<char>(n & 0xff)} +
         std::string(s);
}

// A body built field by field, for what ssh-keygen never writes.
struct Fields {
  std::string magic{"openssh-key-v1\0", 15};
  std::string cipher = "none";
  std::string kdf = "none";
  std::string count{"\0\0\0\1", 4};
  std::string public_blob = Wire("ssh-ed25519") + Wire(std::string(32, 'k'));
  std::string section = "chekchek" + std::string(8, 'p');

  std::string Text() const {
    return Armour(magic + Wire(cipher) + Wire(kdf) + Wire("") + count +
                  Wire(public_blob) + Wire(section));
  }
};

TEST(OpenSshKeyTest, ReadsTypeAndPublicKeyOfEachKind) {
  // Given ssh-keygen's keys, expect their type and exactly the .pub's key.
  struct Case {
    const char* text;
    const char* type;
    const char* pub;
  };
  for (const Case& c : {Case{kEd25519, "ssh-ed25519", kEd25519Pub},
                        Case{kRsa1024, "ssh-rsa", kRsa1024Pub},
                        Case{kEcdsa256, "ecdsa-sha2-nistp256", kEcdsa256Pub}}) {
    EXPECT_TRUE(HasOpenSshKeyArmour(c.text));
    StatusOr<OpenSshKey> key = ParseOpenSshKey(c.text);
    ASSERT_THAT(key, IsOk()) << c.type;
    EXPECT_EQ(key->type, c.type);
    EXPECT_EQ(key->cipher, "none");
    EXPECT_EQ(key->kdf, "none");
    EXPECT_FALSE(key->encrypted());
    EXPECT_EQ(Base64Encode(key->public_blob), c.pub);
  }
}

TEST(OpenSshKeyTest, AnEncryptedKeyShowsItsCipherAndPublicKey) {
  StatusOr<OpenSshKey> key = ParseOpenSshKey(kEd25519Encrypted);
  ASSERT_THAT(key, IsOk());
  EXPECT_TRUE(key->encrypted());
  EXPECT_EQ(key->cipher, "aes256-ctr");
  EXPECT_EQ(key->kdf, "bcrypt");
  EXPECT_EQ(key->type, "ssh-ed25519");
  EXPECT_EQ(Base64Encode(key->public_blob), kEd25519EncryptedPub);
}

TEST(OpenSshKeyTest, ArmourMayHaveCrlfAndTextAround) {
  std::string crlf;
  for (char c : std::string(kEd25519)) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  EXPECT_THAT(ParseOpenSshKey(crlf), IsOk());
  EXPECT_THAT(ParseOpenSshKey("# job key\n" + std::string(kEd25519) + "#end"),
              IsOk());
  EXPECT_THAT(ParseOpenSshKey(Fields().Text()), IsOk());
}

TEST(OpenSshKeyTest, EveryTruncatedBodyIsRefused) {
  // Given a key cut short at every byte, END line kept, expect an error each
  // time (the private section is last, so no prefix is a whole key).
  for (const char* text : {kEd25519, kEd25519Encrypted, kRsa1024}) {
    std::string raw = Body(text);
    for (size_t n = 0; n < raw.size(); ++n) {
      EXPECT_THAT(ParseOpenSshKey(Armour(raw.substr(0, n))),
                  StatusIs(Code::kFailedPrecondition, "not an OpenSSH"))
          << n << " of " << raw.size();
    }
  }
  std::string raw = Body(kEd25519);
  EXPECT_THAT(ParseOpenSshKey(Armour(raw.substr(0, 20))),
              StatusIs(Code::kFailedPrecondition, "truncated at the cipher"));
  EXPECT_THAT(
      ParseOpenSshKey(Armour(raw.substr(0, raw.size() - 1))),
      StatusIs(Code::kFailedPrecondition, "truncated at the private section"));
}

TEST(OpenSshKeyTest, ArmourAndBase64Errors) {
  std::string text = kEd25519;
  EXPECT_THAT(ParseOpenSshKey(text.substr(0, text.find("-----END"))),
              StatusIs(Code::kFailedPrecondition, "no END line"));
  std::string bad = text;
  bad[bad.find('\n') + 5] = '!';
  EXPECT_THAT(ParseOpenSshKey(bad),
              StatusIs(Code::kFailedPrecondition, "not base64"));
  const char* pem =
      "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n";
  EXPECT_FALSE(HasOpenSshKeyArmour(pem));
  EXPECT_THAT(ParseOpenSshKey(pem),
              StatusIs(Code::kFailedPrecondition, "no BEGIN line"));
}

TEST(OpenSshKeyTest, WrongMagicIsRefused) {
  for (std::string magic :
       {std::string("openssh-key-v2\0", 15),
        std::string("OPENSSH-KEY-V1\0", 15), std::string()}) {
    Fields f;
    f.magic = magic;
    EXPECT_THAT(ParseOpenSshKey(f.Text()),
                StatusIs(Code::kFailedPrecondition, "magic"))
        << magic;
  }
}

TEST(OpenSshKeyTest, FieldsOpenSshWouldRefuse) {
  Fields two;
  two.count = std::string("\0\0\0\2", 4);
  EXPECT_THAT(ParseOpenSshKey(two.Text()),
              StatusIs(Code::kFailedPrecondition, "holds 2 keys"));
  Fields kdf;
  kdf.cipher = "aes256-ctr";
  kdf.kdf = "scrypt";
  EXPECT_THAT(ParseOpenSshKey(kdf.Text()),
              StatusIs(Code::kFailedPrecondition, "unknown KDF \"scrypt\""));
  Fields no_kdf;
  no_kdf.cipher = "aes256-ctr";
  EXPECT_THAT(ParseOpenSshKey(no_kdf.Text()),
              StatusIs(Code::kFailedPrecondition, "without a KDF"));
  Fields untyped;
  untyped.public_blob = Wire("");
  EXPECT_THAT(ParseOpenSshKey(untyped.Text()),
              StatusIs(Code::kFailedPrecondition, "no type"));
}

TEST(OpenSshKeyTest, APlainKeysPrivateSectionIsChecked) {
  Fields differ;
  differ.section = "chekCHEK" + std::string(8, 'p');
  EXPECT_THAT(ParseOpenSshKey(differ.Text()),
              StatusIs(Code::kFailedPrecondition, "check words differ"));
  Fields partial;
  partial.section = "chekchek" + std::string(5, 'p');
  EXPECT_THAT(ParseOpenSshKey(partial.Text()),
              StatusIs(Code::kFailedPrecondition, "not whole blocks of 8"));
  // An encrypted section is opaque without the passphrase: not checked.
  Fields encrypted;
  encrypted.cipher = "aes256-ctr";
  encrypted.kdf = "bcrypt";
  encrypted.section = "chekCHEK" + std::string(8, 'p');
  EXPECT_THAT(ParseOpenSshKey(encrypted.Text()), IsOk());
}

}  // namespace
}  // namespace k8s_agent
