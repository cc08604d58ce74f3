// SPDX-License-Identifier: Apache-2.0

#include "plugin/ssh/kex_offer.h"

#include <cstdint>
#include <vector>

#include "plugin/base/strings.h"

namespace k8s_agent::ssh {
namespace {

constexpr unsigned char kMsgKexinit = 20;
constexpr size_t kCookieSize = 16;
// RFC 4253 6.1: implementations must accept packets of 35000 bytes.
constexpr uint32_t kMaxPacket = 35000;

uint32_t ReadU32(std::string_view s, size_t at) {
  return (uint32_t{static_cast<unsigned char>(s[at])} << 24) |
         (uint32_t{static_cast<unsigned char>(s[at + 1])} << 16) |
         (uint32_t{static_cast<unsigned char>(s[at + 2])} << 8) |
         uint32_t{static_cast<unsigned char>(s[at + 3])};
}

// Reads one name-list at *at; false if it runs past the payload.
bool ReadNameList(std::string_view payload, size_t* at, std::string* out) {
  if (payload.size() - *at < 4) return false;
  uint32_t n = ReadU32(payload, *at);
  *at += 4;
  if (payload.size() - *at < n) return false;
  out->assign(payload.substr(*at, n));
  *at += n;
  return true;
}

bool IsPseudo(const std::string& name) {
  return StartsWith(name, "ext-info-") || StartsWith(name, "kex-strict-");
}

std::vector<std::string> Names(const std::string& list) {
  std::vector<std::string> out;
  for (const std::string& n : Split(list, ',')) {
    if (!n.empty() && !IsPseudo(n)) out.push_back(n);
  }
  return out;
}

bool Overlaps(const std::vector<std::string>& a,
              const std::vector<std::string>& b) {
  for (const std::string& x : a) {
    for (const std::string& y : b) {
      if (x == y) return true;
    }
  }
  return false;
}

// Where the binary packets start: after the server's banner line. Lines
// before the banner are allowed (RFC 4253 4.2); the banner ends with CR LF
// (a bare LF is accepted, as OpenSSH does). None: no full banner yet.
std::optional<size_t> AfterBanner(std::string_view received) {
  size_t at = 0;
  for (;;) {
    size_t eol = received.find('\n', at);
    if (eol == std::string_view::npos) return std::nullopt;
    bool banner = received.substr(at, 4) == "SSH-";
    at = eol + 1;
    if (banner) return at;
  }
}

}  // namespace

std::optional<KexAlgorithms> ParseServerKexinit(std::string_view received) {
  std::optional<size_t> start = AfterBanner(received);
  if (!start) return std::nullopt;
  size_t at = *start;
  if (received.size() - at < 5) return std::nullopt;
  uint32_t length = ReadU32(received, at);
  auto padding = static_cast<unsigned char>(received[at + 4]);
  if (length > kMaxPacket || length < uint32_t{padding} + 1) {
    return std::nullopt;
  }
  if (received.size() - at - 4 < length) return std::nullopt;
  std::string_view payload = received.substr(at + 5, length - padding - 1);
  if (payload.size() < 1 + kCookieSize ||
      static_cast<unsigned char>(payload[0]) != kMsgKexinit) {
    return std::nullopt;
  }
  size_t p = 1 + kCookieSize;
  KexAlgorithms a;
  std::string ciphers_cs, macs_cs, comp_cs;
  if (!ReadNameList(payload, &p, &a.kex) ||
      !ReadNameList(payload, &p, &a.host_key) ||
      !ReadNameList(payload, &p, &ciphers_cs) ||
      !ReadNameList(payload, &p, &a.ciphers) ||
      !ReadNameList(payload, &p, &macs_cs) ||
      !ReadNameList(payload, &p, &a.macs) ||
      !ReadNameList(payload, &p, &comp_cs) ||
      !ReadNameList(payload, &p, &a.compression)) {
    return std::nullopt;
  }
  return a;
}

bool ServerSentNewkeys(std::string_view received) {
  constexpr unsigned char kMsgNewkeys = 21;
  std::optional<size_t> start = AfterBanner(received);
  if (!start) return false;
  size_t at = *start;
  while (received.size() - at >= 6) {
    uint32_t length = ReadU32(received, at);
    if (length > kMaxPacket || length < 2) return false;
    if (static_cast<unsigned char>(received[at + 5]) == kMsgNewkeys) {
      return true;
    }
    if (received.size() - at - 4 < length) return false;
    at += 4 + length;
  }
  return false;
}

std::string DescribeNegotiationFailure(const KexAlgorithms& server,
                                       const KexAlgorithms& ours) {
  return DescribeNegotiationFailure(server, ours, ours);
}

std::string DescribeNegotiationFailure(const KexAlgorithms& server,
                                       const KexAlgorithms& offered,
                                       const KexAlgorithms& supported) {
  struct Kind {
    const char* what;
    const char* ssh_says;  // ssh's "no matching ... found".
    const char* option;    // Where to add one back; null: none.
    const std::string& theirs;
    const std::string& mine;
    const std::string& could;
  };
  const Kind kinds[] = {
      {"key exchange algorithm (KexAlgorithms)", "key exchange method",
       "KexAlgorithms", server.kex, offered.kex, supported.kex},
      {"host key algorithm (HostKeyAlgorithms)", "host key type",
       "HostKeyAlgorithms", server.host_key, offered.host_key,
       supported.host_key},
      {"cipher (Ciphers)", "cipher", "Ciphers", server.ciphers, offered.ciphers,
       supported.ciphers},
      {"MAC (MACs)", "MAC", "MACs", server.macs, offered.macs, supported.macs},
      {"compression method", "compression method", nullptr, server.compression,
       offered.compression, supported.compression},
  };
  for (const Kind& k : kinds) {
    std::vector<std::string> theirs = Names(k.theirs);
    std::vector<std::string> mine = Names(k.mine);
    if (Overlaps(theirs, mine)) continue;
    std::string offer = theirs.empty() ? "none" : Join(theirs, ",");
    std::string out = std::string("no common ") + k.what +
                      ": the server offers " + offer + "; k8s-agent supports " +
                      Join(mine, ",");
    std::vector<std::string> left_out;
    for (const std::string& n : theirs) {
      if (Overlaps({n}, Names(k.could))) left_out.push_back(n);
    }
    if (left_out.empty() || k.option == nullptr) return out;
    return out + " (ssh: \"no matching " + k.ssh_says +
           " found. Their offer: " + offer + "\"). " + Join(left_out, ",") +
           (left_out.size() == 1 ? " is" : " are") +
           " left out by default, as in OpenSSH 9 (weak or SHA-1); better, "
           "give the server a stronger one, else add it back with -o " +
           k.option + "=+" + left_out[0];
  }
  return "algorithm negotiation failed although every kind overlaps; the "
         "server offers kex " +
         Join(Names(server.kex), ",") + ", host keys " +
         Join(Names(server.host_key), ",") + ", ciphers " + server.ciphers +
         ", MACs " + server.macs;
}

}  // namespace k8s_agent::ssh
