// SPDX-License-Identifier: Apache-2.0
// The private directory a worker's sshd runs from: copies of the job's keys
// with the owners and modes sshd insists on (a Secret volume's are root's,
// 0644 or 0440, behind symlinks), its config and pid file, and the ssh
// client settings for tree spawn.
//
//   RUN/             0700 (0711 when sshd, as root, serves another user)
//     ssh_host_key   0600, sshd's
//     sshd_config    0600
//     sshd.pid
//     user/          0700, the session user's (made afresh on each start:
//                    what they left there is never written through): sshd
//                    reads authorized_keys
//       authorized_keys   with that user's uid, and sessions read the rest
//       id_job, known_hosts, config   (only when the job has a user key)
#ifndef K8S_AGENT_PLUGIN_SSHD_RUN_DIR_H_
#define K8S_AGENT_PLUGIN_SSHD_RUN_DIR_H_

#include <string>

#include "plugin/base/status.h"
#include "plugin/sshd/job_keys.h"
#include "plugin/sshd/session_user.h"

namespace k8s_agent::sshd {

struct RunDir {
  std::string dir;
  std::string host_key;
  std::string authorized_keys;
  std::string config;
  std::string pid_file;
  /// The tree-spawn client config, empty when the job has no user key or
  /// no public host key to check workers against.
  std::string client_config;
  /// Set when a process of the session user could swap the directory's
  /// path while sshd runs from it (its parent is theirs to write).
  std::string warning;
};

/// Makes a fresh RUN under `parent` (TMPDIR or /tmp) and installs `keys`
/// for `user` there; the client config for tree spawn uses `port`.
StatusOr<RunDir> MakeRunDir(const std::string& parent, const JobKeys& keys,
                            const SessionUser& user, int port);

/// The same in `dir` as named (--run-dir: an emptyDir, or a path a probe
/// reads the pid file from): created if missing; an existing one must be
/// this uid's and writable by it alone. Files in it are replaced.
StatusOr<RunDir> UseRunDir(const std::string& dir, const JobKeys& keys,
                           const SessionUser& user, int port);

}  // namespace k8s_agent::sshd

#endif  // K8S_AGENT_PLUGIN_SSHD_RUN_DIR_H_
