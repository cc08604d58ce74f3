// SPDX-License-Identifier: Apache-2.0
// HOST parsing: IP literals and DNS-1123 names.

#include "plugin/agent/host_name.h"

#include <arpa/inet.h>

#include <cctype>

#include "plugin/base/strings.h"

namespace k8s_agent {
namespace {

constexpr size_t kMaxName = 253;  // DNS-1123 subdomain.
constexpr size_t kMaxLabel = 63;  // DNS-1123 label.

bool IsLabelChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

Status CheckLabel(const std::string& label, const std::string& host) {
  auto bad = [&](const std::string& why) {
    return InvalidArgumentError("invalid host name \"" + Printable(host) +
                                "\": " + why +
                                " (expected a pod name, a pod DNS name or "
                                "an IP address)");
  };
  if (label.empty()) return bad("empty label");
  if (label.size() > kMaxLabel) return bad("label longer than 63 characters");
  for (char c : label) {
    if (!IsLabelChar(c)) {
      return bad("character '" + Printable(std::string(1, c)) +
                 "' is not allowed");
    }
  }
  if (label.front() == '-' || label.back() == '-') {
    return bad("a label cannot start or end with '-'");
  }
  return OkStatus();
}

// Only digits, dots and 0x hex: glibc's inet_aton also accepts anything
// after a blank ("1.2.3.4 junk"), which must stay an invalid name.
bool IsInetAtonForm(const std::string& s) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) {
    return false;
  }
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c)) && c != '.' && c != 'x' &&
        c != 'X') {
      return false;
    }
  }
  return true;
}

}  // namespace

StatusOr<HostName> ParseHostName(const std::string& host) {
  HostName out;
  out.original = host;

  std::string addr = host;
  if (addr.size() > 2 && addr.front() == '[' && addr.back() == ']') {
    addr = addr.substr(1, addr.size() - 2);
  }
  unsigned char buf[16];
  char text[INET6_ADDRSTRLEN];
  for (int family : {AF_INET, AF_INET6}) {
    if (inet_pton(family, addr.c_str(), buf) == 1 &&
        inet_ntop(family, buf, text, sizeof(text)) != nullptr) {
      out.kind = HostName::Kind::kIp;
      out.ip = text;
      return out;
    }
  }
  // ssh resolves through getaddrinfo, which takes inet_aton's older IPv4
  // forms too ("127.1", "0x7f.0.0.1", "2130706433", octal "010.0.0.1"):
  // the same HOST must mean the same address here, not a pod name.
  if (IsInetAtonForm(addr)) {
    in_addr v4{};
    if (inet_aton(addr.c_str(), &v4) == 1 &&
        inet_ntop(AF_INET, &v4, text, sizeof(text)) != nullptr) {
      out.kind = HostName::Kind::kIp;
      out.ip = text;
      return out;
    }
    if (addr.find('.') != std::string::npos) {
      // "10.0.0.256" is a mistyped address, not pod "10" in namespace "0".
      return InvalidArgumentError("invalid host name \"" + Printable(host) +
                                  "\": not a valid IPv4 address (expected a "
                                  "pod name, a pod DNS name or an IP address)");
    }
  }

  std::string name = ToLower(host);
  if (name.empty()) {
    return InvalidArgumentError("empty host name (expected a pod name)");
  }
  if (name.size() > kMaxName) {
    return InvalidArgumentError("invalid host name \"" + Printable(host, 64) +
                                "\": longer than 253 characters");
  }
  if (name.back() == '.') name.pop_back();  // Absolute DNS form "w-0.x.".
  std::vector<std::string> labels = Split(name, '.');
  for (const std::string& label : labels) {
    K8S_RETURN_IF_ERROR(CheckLabel(label, host));
  }
  out.kind = HostName::Kind::kPodName;
  out.pod_name = labels[0];
  if (labels.size() >= 2) out.subdomain = labels[1];
  if (labels.size() >= 3) out.ns = labels[2];
  return out;
}

}  // namespace k8s_agent
