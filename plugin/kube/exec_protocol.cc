// SPDX-License-Identifier: Apache-2.0
// The ExecCredential protocol: the input the plugin gets and the answer
// it prints.

#include "plugin/kube/exec_protocol.h"

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "plugin/base/base64.h"
#include "plugin/base/rfc3339.h"
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
    std::optional<int64_t> us = ParseRfc3339Micros(expiry);
    if (!us) {
      return FailedPreconditionError(who + ": status.expirationTimestamp \"" +
                                     Printable(expiry) +
                                     "\" is not an RFC 3339 time");
    }
    // Whole seconds, rounded down: a fraction never extends the credential.
    cred.expires_at = *us / 1000000 - (*us % 1000000 < 0 ? 1 : 0);
  }
  return cred;
}

}  // namespace k8s_agent::kube
