// SPDX-License-Identifier: Apache-2.0
// The user's home directory, found as ssh finds it.

#ifndef K8S_AGENT_PLUGIN_BASE_HOME_DIR_H_
#define K8S_AGENT_PLUGIN_BASE_HOME_DIR_H_

#include <string>
#include <string_view>

namespace k8s_agent {

/// `home_env` (the value of HOME) when it is not empty, else the passwd
/// entry's directory for the real uid, else "/". The caller reads HOME
/// from wherever its environment comes from (getenv, a captured map), so
/// the ssh settings and the launcher agree on one rule.
std::string HomeDir(std::string_view home_env);

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_BASE_HOME_DIR_H_
