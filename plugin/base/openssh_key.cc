// SPDX-License-Identifier: Apache-2.0
// The openssh-key-v1 parser: PEM-style armour, base64, then SSH wire
// fields (RFC 4251 section 5), checked as OpenSSH's sshkey.c checks them.

#include "plugin/base/openssh_key.h"

#include <cstdint>
#include <optional>

#include "plugin/base/base64.h"

namespace k8s_agent {
namespace {

constexpr std::string_view kBegin = "-----BEGIN OPENSSH PRIVATE KEY-----";
constexpr std::string_view kEnd = "-----END OPENSSH PRIVATE KEY-----";
constexpr std::string_view kMagic{"openssh-key-v1\0", 15};
// The "none" cipher's block size: a plain private section is padded to it.
constexpr size_t kPlainBlock = 8;

// Reads SSH wire fields front to back; a field past the end is nullopt.
class WireReader {
 public:
  explicit WireReader(std::string_view data) : data_(data) {}

  std::optional<uint32_t> Uint32() {
    if (data_.size() - at_ < 4) return std::nullopt;
    auto byte = [&](size_t i) {
      return uint32_t{static_cast<unsigned char>(data_[at_ + i])};
    };
    uint32_t v = (byte(0) << 24) | (byte(1) << 16) | (byte(2) << 8) | byte(3);
    at_ += 4;
    return v;
  }

  std::optional<std::string_view> String() {
    std::optional<uint32_t> n = Uint32();
    if (!n || data_.size() - at_ < *n) return std::nullopt;
    std::string_view out = data_.substr(at_, *n);
    at_ += *n;
    return out;
  }

 private:
  std::string_view data_;
  size_t at_ = 0;
};

Status Broken(const std::string& why) {
  return FailedPreconditionError("not an OpenSSH private key: " + why);
}

Status Truncated(const char* field) {
  return Broken(std::string("truncated at the ") + field);
}

// The decoded body between the BEGIN and END lines.
StatusOr<std::string> Unarmour(std::string_view text) {
  size_t begin = text.find(kBegin);
  if (begin == std::string_view::npos) return Broken("no BEGIN line");
  begin += kBegin.size();
  size_t end = text.find(kEnd, begin);
  if (end == std::string_view::npos) {
    return Broken("no END line (cut short when copied?)");
  }
  std::optional<std::string> raw =
      Base64Decode(text.substr(begin, end - begin));
  if (!raw) return Broken("the body is not base64");
  return *raw;
}

// The private section of a key without a passphrase starts with the same
// random word twice; OpenSSH checks them to tell a wrong passphrase, and
// for a plain key only damage makes them differ.
Status CheckPlainSection(std::string_view section) {
  if (section.size() < kPlainBlock || section.size() % kPlainBlock != 0) {
    return Broken("the private section is " + std::to_string(section.size()) +
                  " bytes, not whole blocks of 8");
  }
  WireReader r(section);
  std::optional<uint32_t> first = r.Uint32();
  std::optional<uint32_t> second = r.Uint32();
  if (first != second) {
    return Broken("the private section's check words differ (damaged)");
  }
  return OkStatus();
}

}  // namespace

bool HasOpenSshKeyArmour(std::string_view text) {
  return text.find(kBegin) != std::string_view::npos;
}

StatusOr<OpenSshKey> ParseOpenSshKey(std::string_view text) {
  K8S_ASSIGN_OR_RETURN(std::string raw, Unarmour(text));
  if (std::string_view(raw).substr(0, kMagic.size()) != kMagic) {
    return Broken("no \"openssh-key-v1\" magic");
  }
  WireReader r(std::string_view(raw).substr(kMagic.size()));
  std::optional<std::string_view> cipher = r.String();
  if (!cipher) return Truncated("cipher name");
  std::optional<std::string_view> kdf = r.String();
  if (!kdf) return Truncated("KDF name");
  if (!r.String()) return Truncated("KDF options");
  std::optional<uint32_t> count = r.Uint32();
  if (!count) return Truncated("key count");
  if (*count != 1) {
    return Broken("it holds " + std::to_string(*count) +
                  " keys; OpenSSH reads exactly one");
  }
  std::optional<std::string_view> public_blob = r.String();
  if (!public_blob) return Truncated("public key");
  std::optional<std::string_view> type = WireReader(*public_blob).String();
  if (!type || type->empty()) return Broken("the public key has no type");
  std::optional<std::string_view> section = r.String();
  if (!section) return Truncated("private section");

  OpenSshKey key;
  key.cipher = std::string(*cipher);
  key.kdf = std::string(*kdf);
  key.type = std::string(*type);
  key.public_blob = std::string(*public_blob);
  if (key.kdf != "none" && key.kdf != "bcrypt") {
    return Broken("unknown KDF \"" + key.kdf + "\"");
  }
  // No passphrase can be turned into a key without a KDF.
  if (key.encrypted() && key.kdf == "none") {
    return Broken("cipher " + key.cipher + " without a KDF");
  }
  if (!key.encrypted()) K8S_RETURN_IF_ERROR(CheckPlainSection(*section));
  return key;
}

}  // namespace k8s_agent
