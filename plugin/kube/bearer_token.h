// SPDX-License-Identifier: Apache-2.0
// Turning token-file bytes into a bearer token that is safe to put in an
// HTTP header.

#ifndef K8S_AGENT_PLUGIN_KUBE_BEARER_TOKEN_H_
#define K8S_AGENT_PLUGIN_KUBE_BEARER_TOKEN_H_

#include <string>
#include <string_view>

#include "plugin/base/status.h"

namespace k8s_agent::kube {

/// Returns the token held by `text` (a token file's bytes, or a
/// kubeconfig `token:` value). Surrounding blanks and line ends are
/// dropped, as client-go does (a file written by `echo` ends in a
/// newline). Any control character left inside is refused with
/// kInvalidArgument naming `origin` and the byte's offset, never the
/// token: inside an `Authorization:` header a CR or LF would start a new
/// header of the file's choosing. An empty token is kUnauthenticated.
StatusOr<std::string> BearerTokenFrom(std::string_view text,
                                      const std::string& origin);

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_BEARER_TOKEN_H_
