// SPDX-License-Identifier: Apache-2.0
// Client options for a test sshd: its user, port and key, its host key
// strictly checked. Kept out of sshd_fixture (which links only k8s_base).

#ifndef K8S_AGENT_TESTS_INTEGRATION_SSH_SSHD_CLIENT_OPTIONS_H_
#define K8S_AGENT_TESTS_INTEGRATION_SSH_SSHD_CLIENT_OPTIONS_H_

#include <string>

#include "plugin/ssh/ssh_options.h"
#include "tests/integration/ssh/sshd_fixture.h"

namespace k8s_agent::testing {

// `known_hosts` is a file from sshd.WriteKnownHosts(); the caller sets the
// timeouts its test needs.
inline ssh::ResolvedSshOptions SshdClientOptions(
    const SshdFixture& sshd, const std::string& known_hosts) {
  ssh::ResolvedSshOptions o;
  o.user = sshd.user();
  o.port = sshd.port();
  o.identity_files = {sshd.user_key()};
  o.strict_host_key_checking = ssh::StrictHostKeyChecking::kYes;
  o.known_hosts_files = {known_hosts};
  return o;
}

}  // namespace k8s_agent::testing

#endif  // K8S_AGENT_TESTS_INTEGRATION_SSH_SSHD_CLIENT_OPTIONS_H_
