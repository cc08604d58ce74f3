// SPDX-License-Identifier: Apache-2.0
// The ssh client settings k8s-agent honours, and ssh_config merging.

#ifndef K8S_AGENT_PLUGIN_SSH_SSH_OPTIONS_H_
#define K8S_AGENT_PLUGIN_SSH_SSH_OPTIONS_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
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
  /// HostName as written ("%h" is the host as given): the name k8s-agent
  /// looks up in the pods API instead of the host, as ssh connects to it.
  std::optional<std::string> hostname;
  std::optional<std::string> host_key_alias;          ///< HostKeyAlias.
  std::vector<std::string> global_known_hosts_files;  ///< GlobalKnownHostsFile.
  std::optional<std::string> bind_address;            ///< -b / BindAddress.
  /// CanonicalizeHostname, lowercased: "yes" or "always" makes the config
  /// be read a second time (Match canonical), as in ssh; k8s-agent itself
  /// does no DNS.
  std::optional<std::string> canonicalize_hostname;
  /// IgnoreUnknown: patterns of keywords to accept unread.
  std::optional<std::string> ignore_unknown;

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

/// ApplySshOption, then the rule for every other keyword, as ssh reads
/// a config line or -o: a keyword OpenSSH does not know is an error
/// (unless IgnoreUnknown covers it), one k8s-agent needs nothing for adds
/// a line to `*note`, one it cannot honour is an error saying why.
/// Host, Match and Include are the config reader's (ssh_config.h).
Status ApplySshSetting(const std::string& key, const std::string& value,
                       SshOptions* options, std::string* note);

/// True when `host` matches a Host line's pattern list ("a* !ab ?c"):
/// some pattern matches and no !negated one does. Case-insensitive.
bool HostPatternMatches(const std::string& pattern_list,
                        const std::string& host);

/// ssh_config's word splitting: blanks separate, double quotes group, and
/// an unquoted word starting with '#' ends the line (a trailing comment).
std::vector<std::string> SplitConfigWords(std::string_view s);

/// The effective settings after defaults: what the transport uses.
struct ResolvedSshOptions {
  /// The name to look up in the pods API: HostName (with %h expanded),
  /// else the host as given.
  std::string hostname;
  /// The name host keys are checked under: HostKeyAlias, else hostname.
  std::string host_key_alias;
  std::string bind_address;  ///< Empty: the kernel picks the source.
  std::string user;
  int port = 22;
  /// Existing identity files to try, in order; if none was configured,
  /// the ssh defaults (~/.ssh/id_ed25519, id_ecdsa, id_rsa) that exist.
  std::vector<std::string> identity_files;
  StrictHostKeyChecking strict_host_key_checking = StrictHostKeyChecking::kYes;
  /// The user's files first (the first is written to), then the global
  /// ones (GlobalKnownHostsFile, default /etc/ssh/ssh_known_hosts).
  std::vector<std::string> known_hosts_files;
  Duration connect_timeout = std::chrono::seconds(10);
  int server_alive_interval_s = 30;  ///< 0 disables keepalives.
  int server_alive_count_max = 3;
  bool no_stdin = false;
  /// OpenSSH 9's defaults unless Ciphers= etc. changed them.
  AlgorithmPrefs algorithms;
};

/// HostName's value for `host`: %h is the host, %% a percent sign.
StatusOr<std::string> ExpandHostName(const std::string& hostname,
                                     const std::string& host);

/// The login name when -l/User is not given and our uid has no passwd
/// entry: the name k8s-agent-sshd gives such a uid on the worker.
inline constexpr const char kNoPasswdEntryUser[] = "default";

/// The login name of `uid` in the user database; nullopt if it has none.
using UserLookup = std::optional<std::string> (*)(unsigned uid);
std::optional<std::string> PasswdUserName(unsigned uid);

/// Fills defaults for `host` as given (home-relative paths,
/// ~/.ssh/known_hosts; the user, as ssh does, from -l/User or else the
/// passwd entry of our uid, never from $USER). With neither,
/// kNoPasswdEntryUser, where ssh would refuse ("No user exists for uid N").
StatusOr<ResolvedSshOptions> Resolve(const SshOptions& options,
                                     const std::string& host,
                                     UserLookup lookup = &PasswdUserName);

/// The settings of every host: ssh reads its config for each destination
/// (Host and Match blocks), so --wait-only and --hostfile ask per host.
using SshSettingsFor =
    std::function<StatusOr<ResolvedSshOptions>(const std::string& host)>;

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_PLUGIN_SSH_SSH_OPTIONS_H_
