// SPDX-License-Identifier: Apache-2.0
// The ExecCredential protocol's data: the input the plugin gets, the
// answer it prints, and which executable it is.

#include "plugin/kube/exec_credential.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>

#include <nlohmann/json.hpp>

#include "plugin/base/base64.h"
#include "plugin/base/strings.h"
#include "plugin/kube/json_depth.h"

namespace k8s_agent::kube {
namespace {

using nlohmann::json;

// client-go's words, so a user searching for them finds the same docs.
constexpr char kInstallHintIntro[] =
    "It looks like you are trying to use a client-go credential plugin that "
    "is not installed. To learn more about this feature, consult the "
    "documentation available at: https://kubernetes.io/docs/reference/"
    "access-authn-authz/authentication/#client-go-credential-plugins";

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

// FNV-1a, 64 bits. The key only names a cache file inside the user's own
// 0700 directory, so it needs to be stable and collision-poor, not secret.
uint64_t Fnv1a(std::string_view data, uint64_t h) {
  for (char c : data) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
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

StatusOr<std::string> ResolveExecCommand(const ExecConfig& exec,
                                         const std::string& path_env) {
  auto not_found = [&](const std::string& detail) {
    std::string message = exec.where + ": exec plugin command \"" +
                          Printable(exec.command) + "\" " + detail + ". " +
                          kInstallHintIntro;
    if (!exec.install_hint.empty()) {
      message += ". installHint: " + Printable(exec.install_hint, 2048);
    }
    return FailedPreconditionError(message);
  };
  if (exec.command.find('/') != std::string::npos) {
    if (::access(exec.command.c_str(), X_OK) != 0) {
      return not_found("is not an executable file");
    }
    return exec.command;
  }
  for (const std::string& dir : Split(path_env, ':')) {
    // An empty $PATH entry is the current directory, as in execvp.
    std::string candidate = (dir.empty() ? "." : dir) + "/" + exec.command;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return not_found("was not found in $PATH");
}

std::string ExecCacheKey(const ExecConfig& exec, const std::string& server) {
  // Length-prefixed fields: ("ab","c") and ("a","bc") must differ.
  std::string data;
  auto add = [&data](const std::string& field) {
    data += std::to_string(field.size()) + ":" + field + ";";
  };
  add(exec.api_version);
  add(exec.command);
  add(std::to_string(exec.args.size()));
  for (const std::string& a : exec.args) add(a);
  add(std::to_string(exec.env.size()));
  for (const auto& [name, value] : exec.env) {
    add(name);
    add(value);
  }
  add(exec.provide_cluster_info ? "cluster-info" : "");
  add(server);
  char hex[33];
  std::snprintf(
      hex, sizeof(hex), "%016llx%016llx",
      static_cast<unsigned long long>(Fnv1a(data, 0xcbf29ce484222325ULL)),
      static_cast<unsigned long long>(Fnv1a(data, 0x84222325cbf29ce4ULL)));
  return hex;
}

}  // namespace k8s_agent::kube
