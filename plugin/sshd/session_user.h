// SPDX-License-Identifier: Apache-2.0
// Who the worker's sshd lets in. As root it serves root, or the user named
// with --user; as any other uid it can only serve that uid (privilege
// separation without root cannot switch users), which is what runAsNonRoot
// and OpenShift-style random-uid pods need.
#ifndef K8S_AGENT_PLUGIN_SSHD_SESSION_USER_H_
#define K8S_AGENT_PLUGIN_SSHD_SESSION_USER_H_

#include <sys/types.h>

#include <string>

#include "plugin/base/status.h"

namespace k8s_agent::sshd {

struct SessionUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string home;
  std::string shell;  ///< As the passwd entry says; empty means /bin/sh.
};

/// The user to serve when running as `euid`, `requested` being --user's
/// value (empty: root as root, else the uid's own entry). kNotFound when a
/// non-root `euid` has no passwd entry (then AddPasswdEntry).
StatusOr<SessionUser> ResolveSessionUser(const std::string& requested,
                                         uid_t euid);

/// For a non-root uid with no passwd entry, as OpenShift's restricted-v2
/// runs one: appends "default:x:UID:GID:...:HOME:/bin/sh" to `passwd_file`
/// (named "uUID" if "default" is taken) and returns that user, whom sshd
/// then finds. Where the file cannot be written (the image's mode, a
/// read-only root), kFailedPrecondition saying what the image or pod must
/// add. `home` empty means "/".
StatusOr<SessionUser> AddPasswdEntry(uid_t euid, gid_t egid,
                                     const std::string& home,
                                     const std::string& passwd_file);

/// What would make sshd refuse every login of `user` later, with nothing
/// but "Connection closed" at the client: a login shell that is missing or
/// refuses (nologin, false), and, for an sshd running as root, a locked
/// password ('!' in `shadow_file`), which sshd without PAM treats as a
/// locked account even for key logins.
Status CheckCanLogIn(const SessionUser& user, bool sshd_is_root,
                     const std::string& shadow_file);

}  // namespace k8s_agent::sshd

#endif  // K8S_AGENT_PLUGIN_SSHD_SESSION_USER_H_
