// SPDX-License-Identifier: Apache-2.0
#include "plugin/ssh/file_tokens.h"

#include "plugin/base/strings.h"

namespace k8s_agent::ssh {
namespace {

std::optional<std::string> Token(char t, const FileTokens& k) {
  switch (t) {
    case '%':
      return std::string("%");
    case 'd':
      return k.home;
    case 'h':
      return k.host;
    case 'n':
      return k.host_arg;
    case 'k':
      return k.key_alias;
    case 'r':
      return k.user;
    case 'u':
      return k.local_user;
    case 'l':
      return k.local_host;
    case 'L':
      return k.local_host.substr(0, k.local_host.find('.'));
    case 'i':
      return std::to_string(k.uid);
    case 'p':
      return std::to_string(k.port);
    case 'j':
      return std::string();  // No ProxyJump here.
    default:
      return std::nullopt;
  }
}

}  // namespace

StatusOr<std::string> ExpandFileTokens(const std::string& keyword,
                                       const std::string& path,
                                       const FileTokens& tokens) {
  const std::string what = keyword + " " + Printable(path);
  std::string in = path;
  // ssh expands ~ (and ~/) first; ~user is left to the file system's
  // absence of such a name, as k8s-agent has no other user's home.
  if (in == "~" || StartsWith(in, "~/")) in = tokens.home + in.substr(1);
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '$' && i + 1 < in.size() && in[i + 1] == '{') {
      size_t close = in.find('}', i + 2);
      if (close == std::string::npos) {
        return InvalidArgumentError(what + ": unterminated ${");
      }
      std::string name = in.substr(i + 2, close - i - 2);
      std::optional<std::string> value =
          tokens.getenv ? tokens.getenv(name) : std::nullopt;
      if (!value) {
        return InvalidArgumentError(what + ": environment variable ${" + name +
                                    "} has no value");
      }
      out += *value;
      i = close;
      continue;
    }
    if (in[i] != '%') {
      out += in[i];
      continue;
    }
    if (i + 1 == in.size()) {
      return InvalidArgumentError(what + ": a lone % at the end (write %%)");
    }
    char t = in[++i];
    std::optional<std::string> value = Token(t, tokens);
    if (!value) {
      return InvalidArgumentError(
          what + ": token %" + std::string(1, t) +
          (t == 'C' ? " is not supported by k8s-agent"
                    : " is not one ssh expands there") +
          " (it expands %%, %d, %h, %i, %j, %k, %L, %l, %n, %p, %r, %u, "
          "${VAR} and ~)");
    }
    out += *value;
  }
  return out;
}

}  // namespace k8s_agent::ssh
