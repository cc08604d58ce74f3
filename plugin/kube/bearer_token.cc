// SPDX-License-Identifier: Apache-2.0
// BearerTokenFrom: trim, then refuse anything that could split a header.

#include "plugin/kube/bearer_token.h"

#include <cstdio>

#include "plugin/base/strings.h"

namespace k8s_agent::kube {

StatusOr<std::string> BearerTokenFrom(std::string_view text,
                                      const std::string& origin) {
  std::string_view token = Trim(text);
  if (token.empty()) return UnauthenticatedError(origin + " is empty");
  for (size_t i = 0; i < token.size(); ++i) {
    auto c = static_cast<unsigned char>(token[i]);
    if (c >= 0x20 && c != 0x7f) continue;
    char code[8];
    std::snprintf(code, sizeof(code), "0x%02x", c);
    // The token itself is never shown, not even in part.
    return InvalidArgumentError(
        origin + " holds a control character (" + code + ") at byte " +
        std::to_string(i) + " of " + std::to_string(token.size()) +
        ": a bearer token is one line of printable characters; the file is "
        "refused rather than sent in an HTTP header (rewrite it with the "
        "token alone, e.g. kubectl create token ... > FILE)");
  }
  return std::string(token);
}

}  // namespace k8s_agent::kube
