// SPDX-License-Identifier: Apache-2.0
// The ssh client settings k8s-agent honours, and ssh_config merging.

#ifndef K8S_AGENT_PLUGIN_SSH_SSH_OPTIONS_H_
#define K8S_AGENT_PLUGIN_SSH_SSH_OPTIONS_H_

#include <optional>
#include <string>
#include <vector>

#include "plugin/base/clock.h"
#include "plugin/base/status.h"
#include "plugin/ssh/algorithms.h"

namespace k8s_agent::ssh {

enum class StrictHostKeyChecking { kYes, kAcceptNew, kNo };

/// Settings as ssh(1) names them. Each is optional so that the command
/// line, then ~/.ssh/config, then /etc/ssh/ssh_config can be layered: the
/// first source that sets a value wins, as in ssh.
struct SshOptions {
  std::optional<std::string> user;
  std::optional<int> port;
  std::vector<std::string> identity_files;  ///< Accumulate, as in ssh.
  std::optional<StrictHostKeyChecking> strict_host_key_checking;
  std::vector<std::string> user_known_hosts_files;
  std::optional<Duration> connect_timeout;
  std::optional<int> server_alive_interval_s;
  std::optional<int> server_alive_count_max;
  std::optional<int> connection_attempts;
  std::optional<bool> batch_mode;
  /// LogLevel, lowercased ("error", "debug1", ...); validated, for the
  /// launcher to map onto its own verbosity.
  std::optional<std::string> log_level;
  /// -n: read no stdin (stdin is /dev/null under Open MPI anyway).
  bool no_stdin = false;
  /// Ciphers=, KexAlgorithms=, MACs=, HostKeyAlgorithms= as written
  /// (validated; "+x", "-x", "^x" edit OpenSSH's defaults).
  std::optional<std::string> ciphers, kex_algorithms, macs, host_key_algorithms;

  /// Fills unset fields from `lower` (lower precedence).
  void MergeFrom(const SshOptions& lower);
};

/// Applies one "-o Key=Value" / "Key Value" setting. Like ssh, the first
/// value obtained for a key wins (later ones are validated, then ignored);
/// IdentityFile accumulates. Unknown keys are
/// ignored (returns ok, `*known` false) so options meant for OpenSSH never
/// break a launch; bad values are kInvalidArgument naming the key.
Status ApplySshOption(const std::string& key, const std::string& value,
                      SshOptions* options, bool* known = nullptr);

/// True when `host` matches a Host line's pattern list ("a* !ab ?c"):
/// some pattern matches and no !negated one does. Case-insensitive.
bool HostPatternMatches(const std::string& pattern_list,
                        const std::string& host);

/// Parses ssh_config text and returns the settings for `host` (Host
/// patterns with *, ?, and !negation; first match wins per key). Match
/// blocks are skipped and Include is ignored (not supported).
/// `origin` names the file in errors.
StatusOr<SshOptions> ParseSshConfig(const std::string& text,
                                    const std::string& host,
                                    const std::string& origin);

/// The effective settings after defaults: what the transport uses.
struct ResolvedSshOptions {
  std::string user;
  int port = 22;
  /// Existing identity files to try, in order; if none was configured,
  /// the ssh defaults (~/.ssh/id_ed25519, id_ecdsa, id_rsa) that exist.
  std::vector<std::string> identity_files;
  StrictHostKeyChecking strict_host_key_checking = StrictHostKeyChecking::kYes;
  std::vector<std::string> known_hosts_files;  ///< First is written to.
  Duration connect_timeout = std::chrono::seconds(10);
  int server_alive_interval_s = 30;  ///< 0 disables keepalives.
  int server_alive_count_max = 3;
  bool no_stdin = false;
  /// OpenSSH 9's defaults unless Ciphers= etc. changed them.
  AlgorithmPrefs algorithms;
};

/// The login name of `uid` in the user database; nullopt if it has none.
using UserLookup = std::optional<std::string> (*)(unsigned uid);
std::optional<std::string> PasswdUserName(unsigned uid);

/// Fills defaults (home-relative paths, ~/.ssh/known_hosts; the user, as
/// ssh does, from -l/User or else the passwd entry of our uid, never from
/// $USER). With neither, kInvalidArgument "No user exists for uid N"
/// instead of guessing a user (ssh refuses too).
StatusOr<ResolvedSshOptions> Resolve(const SshOptions& options,
                                     UserLookup lookup = &PasswdUserName);

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_PLUGIN_SSH_SSH_OPTIONS_H_
