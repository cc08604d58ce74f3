// SPDX-License-Identifier: Apache-2.0
// The ExecCredential protocol: the input the plugin gets and the answer
// it prints.

#include "plugin/kube/exec_protocol.h"

#include <cstdint>
#include <ctime>
#include <string>

#include <nlohmann/json.hpp>

#include "plugin/base/base64.h"
#include "plugin/base/strings.h"
#include "plugin/kube/json_depth.h"

namespace k8s_agent::kube {
namespace {

using nlohmann::json;

std::string StringField(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

bool Digits(std::string_view s, size_t pos, size_t n) {
  if (pos + n > s.size()) return false;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

int Num(std::string_view s, size_t pos, size_t n) {
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) v = v * 10 + (s[i] - '0');
  return v;
}

}  // namespace

std::string ExecInfoJson(const ExecConfig& exec, const ExecClusterInfo& info) {
  json spec = {{"interactive", false}};
  if (exec.provide_cluster_info) {
    json cluster = {{"server", info.server}};
    if (!info.tls_server_name.empty()) {
      cluster["tls-server-name"] = info.tls_server_name;
    }
    if (info.insecure_skip_tls_verify) {
      cluster["insecure-skip-tls-verify"] = true;
    }
    if (!info.ca_pem.empty()) {
      cluster["certificate-authority-data"] = Base64Encode(info.ca_pem);
    }
    if (!info.proxy_url.empty()) cluster["proxy-url"] = info.proxy_url;
    spec["cluster"] = std::move(cluster);
  }
  json out = {{"apiVersion", exec.api_version},
              {"kind", "ExecCredential"},
              {"spec", std::move(spec)}};
  return out.dump();
}

StatusOr<int64_t> ParseRfc3339(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
  auto bad = [&] {
    return InvalidArgumentError("\"" + Printable(s) +
                                "\" is not an RFC 3339 time");
  };
  if (!Digits(s, 0, 4) || s.size() < 20 || s[4] != '-' || !Digits(s, 5, 2) ||
      s[7] != '-' || !Digits(s, 8, 2) || (s[10] != 'T' && s[10] != 't') ||
      !Digits(s, 11, 2) || s[13] != ':' || !Digits(s, 14, 2) || s[16] != ':' ||
      !Digits(s, 17, 2)) {
    return bad();
  }
  size_t pos = 19;
  if (s[pos] == '.') {
    ++pos;
    size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
    if (pos == start) return bad();
  }
  int64_t offset = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z') &&
      pos + 1 == s.size()) {
    offset = 0;
  } else if (pos + 6 == s.size() && (s[pos] == '+' || s[pos] == '-') &&
             Digits(s, pos + 1, 2) && s[pos + 3] == ':' &&
             Digits(s, pos + 4, 2)) {
    offset = (Num(s, pos + 1, 2) * 60 + Num(s, pos + 4, 2)) * 60;
    if (s[pos] == '-') offset = -offset;
  } else {
    return bad();
  }
  std::tm tm{};
  tm.tm_year = Num(s, 0, 4) - 1900;
  tm.tm_mon = Num(s, 5, 2) - 1;
  tm.tm_mday = Num(s, 8, 2);
  tm.tm_hour = Num(s, 11, 2);
  tm.tm_min = Num(s, 14, 2);
  tm.tm_sec = Num(s, 17, 2);
  if (tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 ||
      tm.tm_min > 59 || tm.tm_sec > 60) {
    return bad();
  }
  return static_cast<int64_t>(::timegm(&tm)) - offset;
}

StatusOr<ExecCredential> ParseExecCredential(std::string_view text,
                                             const std::string& api_version,
                                             const std::string& plugin) {
  const std::string who = "exec plugin " + plugin;
  if (Status depth = CheckJsonDepth(text, 16); !depth.ok()) {
    return FailedPreconditionError(who + ": its output nests too deeply");
  }
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return FailedPreconditionError(
        who + " did not print an ExecCredential JSON object on stdout");
  }
  std::string kind = StringField(doc, "kind");
  std::string version = StringField(doc, "apiVersion");
  if (kind != "ExecCredential") {
    return FailedPreconditionError(who + " printed kind \"" + Printable(kind) +
                                   "\", not ExecCredential");
  }
  if (version != api_version) {
    // client-go refuses the mix too: the fields differ between versions.
    return FailedPreconditionError(
        who + " is configured to use API version " + api_version +
        ", but it returned \"" + Printable(version) +
        "\" (make users[].user.exec.apiVersion match the plugin)");
  }
  auto status = doc.find("status");
  if (status == doc.end() || !status->is_object()) {
    return FailedPreconditionError(who + " didn't return a status field");
  }
  ExecCredential cred;
  cred.token = StringField(*status, "token");
  cred.client_cert_pem = StringField(*status, "clientCertificateData");
  cred.client_key_pem = StringField(*status, "clientKeyData");
  if (cred.client_cert_pem.empty() != cred.client_key_pem.empty()) {
    return FailedPreconditionError(
        who +
        " returned only one of clientCertificateData and "
        "clientKeyData; both are needed");
  }
  if (cred.token.empty() && cred.client_cert_pem.empty()) {
    return FailedPreconditionError(who +
                                   " didn't return a token or cert/key pair");
  }
  std::string expiry = StringField(*status, "expirationTimestamp");
  if (!expiry.empty()) {
    StatusOr<int64_t> at = ParseRfc3339(expiry);
    if (!at.ok()) {
      return FailedPreconditionError(who + ": status.expirationTimestamp " +
                                     at.status().message());
    }
    cred.expires_at = *at;
  }
  return cred;
}

}  // namespace k8s_agent::kube
