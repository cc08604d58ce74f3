// SPDX-License-Identifier: Apache-2.0
// Reading ssh_config files for one destination as OpenSSH 9.2's ssh does:
// Host and Match blocks, Include with its globbing and relative paths,
// IgnoreUnknown, and the second ("final") pass.

#ifndef K8S_AGENT_PLUGIN_SSH_SSH_CONFIG_H_
#define K8S_AGENT_PLUGIN_SSH_SSH_CONFIG_H_

#include <sys/stat.h>

#include <functional>
#include <string>
#include <vector>

#include "plugin/base/status.h"
#include "plugin/ssh/ssh_options.h"

namespace k8s_agent::ssh {

/// A config file as read: its text, and its owner and mode (from fstat of
/// the fd it was read from), which ssh checks before using it.
struct ConfigText {
  std::string text;
  unsigned owner = 0;              ///< st_uid.
  unsigned mode = S_IFREG | 0644;  ///< st_mode: the type and the bits.
};

/// What the reader needs from the machine: seams, so tests use fakes.
struct ConfigEnv {
  std::string local_user;  ///< The passwd name of our uid (%u, localuser).
  unsigned uid = 0;        ///< Our real uid: who may own a user config.
  std::string home;        ///< ~ and %d.
  std::string local_host;  ///< %l (and %L, up to the first dot).
  /// A file's text, owner and mode; kNotFound when it does not exist.
  /// Anything but a regular file comes back with its mode and no text.
  std::function<StatusOr<ConfigText>(const std::string& path)> read_file;
  /// The paths matching a glob pattern, sorted; none is not an error.
  std::function<std::vector<std::string>(const std::string& pattern)> glob;
  /// Match exec: runs `command` with the user's shell; true if it exited
  /// 0. Only called when the criteria before it matched, as in ssh.
  std::function<StatusOr<bool>(const std::string& command)> run_exec;
};

/// One file to read. Relative Include paths resolve against ~/.ssh for a
/// user file and /etc/ssh for the system one, as in ssh.
struct ConfigFile {
  std::string path;
  bool user = true;
  /// Named by the user (-F, --ssh-config): a missing file is an error.
  bool required = false;
  /// How the user named it, for that error ("-F", "--ssh-config").
  std::string named_by = "ssh config";
  /// ssh's check for ~/.ssh/config (and every Include): owned by root or
  /// our uid, and writable by no one else, or it is refused.
  bool check_permissions = false;
};

/// Reads `files` in order into `options` for `host` (as given, after any
/// user@), the first value of each key winning over later ones, so the
/// command line's settings must already be in `options`. Anything not
/// understood is an error naming file:line. `notes` gets the debug lines
/// (settings accepted without effect, skipped exec, ...).
Status ReadSshConfigs(const std::vector<ConfigFile>& files,
                      const std::string& host, const ConfigEnv& env,
                      SshOptions* options, std::vector<std::string>* notes);

/// The real machine: passwd name, $HOME, gethostname, glob(3), and Match
/// exec through $SHELL (else /bin/sh) -c with stdin and stdout on
/// /dev/null, as ssh runs it.
ConfigEnv SystemConfigEnv(const std::string& home);

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_PLUGIN_SSH_SSH_CONFIG_H_
