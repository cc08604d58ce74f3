// SPDX-License-Identifier: Apache-2.0
#include "plugin/ssh/remote_names.h"

#include <cctype>
#include <cstring>

#include "plugin/base/strings.h"

namespace k8s_agent::ssh {
namespace {

bool IsControl(char c) { return std::iscntrl(static_cast<unsigned char>(c)); }
bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)); }

// Why `user` is refused, or "" when ssh would take it.
std::string UserFault(const std::string& user) {
  if (!user.empty() && user[0] == '-') return "it starts with '-'";
  for (size_t i = 0; i < user.size(); ++i) {
    const char c = user[i];
    if (IsControl(c)) return "it holds a control character";
    if (std::strchr("'`\";&<>|(){}", c) != nullptr) {
      return std::string("it holds '") + c + "'";
    }
    if (IsSpace(c) && i + 1 < user.size() && user[i + 1] == '-') {
      return "it holds a '-' after whitespace";
    }
    if (c == '\\' && i + 1 == user.size()) return "it ends with '\\'";
  }
  return "";
}

std::string HostFault(const std::string& host) {
  if (!host.empty() && host[0] == '-') return "it starts with '-'";
  for (char c : host) {
    if (IsSpace(c)) return "it holds whitespace";
    if (IsControl(c)) return "it holds a control character";
    if (std::strchr("'`\"$\\;&<>|(){},", c) != nullptr) {
      return std::string("it holds '") + c + "'";
    }
  }
  return "";
}

}  // namespace

Status CheckRemoteUser(const std::string& user, const std::string& from) {
  std::string fault = UserFault(user);
  if (fault.empty()) return OkStatus();
  return InvalidArgumentError(
      from + ": remote user name '" + Printable(user) +
      "' contains invalid characters (" + fault +
      "): ssh refuses shell metacharacters in user names, since %r in a "
      "Match exec command runs in a shell; check the hostfile or "
      "plm_rsh_args that gave it");
}

Status CheckRemoteHost(const std::string& host, const std::string& from) {
  std::string fault = HostFault(host);
  if (fault.empty()) return OkStatus();
  return InvalidArgumentError(
      from + ": host name '" + Printable(host) +
      "' contains invalid characters (" + fault +
      "): ssh refuses shell metacharacters in host names, since %h in a "
      "Match exec command runs in a shell");
}

}  // namespace k8s_agent::ssh
