// SPDX-License-Identifier: Apache-2.0
// The versions of the libraries linked into this binary, for --version: a
// platform team checks them against advisories without unpacking it.

#ifndef K8S_AGENT_PLUGIN_AGENT_LINKED_LIBRARIES_H_
#define K8S_AGENT_PLUGIN_AGENT_LINKED_LIBRARIES_H_

#include <string>

namespace k8s_agent {

/// "OpenSSL 3.0.17, libssh2 1.11.1, libcurl 8.14.1, nghttp2 1.52.0,
/// yaml-cpp 0.7.0+dfsg-8+b1": each as the library reports itself at run
/// time (the code linked in, not the headers compiled against), except
/// yaml-cpp, which reports nothing: its Debian package version.
std::string LinkedLibraries();

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_AGENT_LINKED_LIBRARIES_H_
