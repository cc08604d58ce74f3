// SPDX-License-Identifier: Apache-2.0
#include "plugin/sshd/run_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <vector>

#include "plugin/base/files.h"
#include "plugin/sshd/sshd_config.h"

namespace k8s_agent::sshd {
namespace {

StatusOr<std::string> MakePrivateDir(const std::string& parent) {
  std::string templ = JoinPath(parent, "k8s-agent-sshd.XXXXXX");
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    return ErrnoError("creating a private directory under " + parent +
                          " (set TMPDIR to a writable directory, or mount " +
                          "an emptyDir on /tmp)",
                      errno);
  }
  return std::string(buf.data());
}

// The session user's part: authorized_keys, and the client side of tree
// spawn when the job gives a user key and the shared host key's public half.
Status InstallUserFiles(const JobKeys& keys, const SessionUser& user, int port,
                        RunDir& run) {
  std::string dir = JoinPath(run.dir, "user");
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return ErrnoError("mkdir " + dir, errno);
  }
  FileOwner owner{user.uid, user.gid};
  if (chown(dir.c_str(), owner.uid, owner.gid) != 0) {
    return ErrnoError("chown " + dir, errno);
  }
  run.authorized_keys = JoinPath(dir, "authorized_keys");
  K8S_RETURN_IF_ERROR(WriteFileAtomically(run.authorized_keys,
                                          keys.authorized_keys, 0600, owner));
  if (keys.user_key.empty() || keys.host_public_key.empty()) {
    return OkStatus();
  }
  std::string identity = JoinPath(dir, "id_job");
  std::string known_hosts = JoinPath(dir, "known_hosts");
  K8S_RETURN_IF_ERROR(
      WriteFileAtomically(identity, keys.user_key, 0600, owner));
  K8S_RETURN_IF_ERROR(WriteFileAtomically(
      known_hosts, RenderKnownHosts(port, keys.host_public_key), 0600, owner));
  run.client_config = JoinPath(dir, "config");
  return WriteFileAtomically(run.client_config,
                             RenderClientConfig(port, identity, known_hosts),
                             0600, owner);
}

// A named directory: made 0700 if missing, else checked: another user's,
// or one others may write to, could hold their files where sshd looks.
Status PrepareNamedDir(const std::string& dir) {
  if (mkdir(dir.c_str(), 0700) == 0) return OkStatus();
  if (errno != EEXIST) {
    return ErrnoError("creating --run-dir " + dir + " (its parent must exist)",
                      errno);
  }
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) return ErrnoError("stat " + dir, errno);
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
      (st.st_mode & 022) != 0) {
    return FailedPreconditionError(
        "--run-dir " + dir + " must be a directory of uid " +
        std::to_string(geteuid()) + " that no one else can write to");
  }
  return OkStatus();
}

Status Fill(const JobKeys& keys, const SessionUser& user, int port,
            RunDir& run) {
  // Another user must pass through to reach user/; listing stays denied.
  mode_t mode = user.uid == geteuid() ? 0700 : 0711;
  if (chmod(run.dir.c_str(), mode) != 0) {
    return ErrnoError("chmod " + run.dir, errno);
  }
  run.host_key = JoinPath(run.dir, "ssh_host_key");
  run.config = JoinPath(run.dir, "sshd_config");
  run.pid_file = JoinPath(run.dir, "sshd.pid");
  // sshd refuses a host key that others can read.
  K8S_RETURN_IF_ERROR(WriteFileAtomically(run.host_key, keys.host_key, 0600));
  return InstallUserFiles(keys, user, port, run);
}

}  // namespace

StatusOr<RunDir> MakeRunDir(const std::string& parent, const JobKeys& keys,
                            const SessionUser& user, int port) {
  RunDir run;
  K8S_ASSIGN_OR_RETURN(run.dir, MakePrivateDir(parent));
  K8S_RETURN_IF_ERROR(Fill(keys, user, port, run));
  return run;
}

StatusOr<RunDir> UseRunDir(const std::string& dir, const JobKeys& keys,
                           const SessionUser& user, int port) {
  K8S_RETURN_IF_ERROR(PrepareNamedDir(dir));
  RunDir run;
  run.dir = dir;
  K8S_RETURN_IF_ERROR(Fill(keys, user, port, run));
  return run;
}

}  // namespace k8s_agent::sshd
