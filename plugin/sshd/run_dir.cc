// SPDX-License-Identifier: Apache-2.0
#include "plugin/sshd/run_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <vector>

#include "plugin/base/files.h"
#include "plugin/base/unique_fd.h"
#include "plugin/sshd/sshd_config.h"

namespace k8s_agent::sshd {
namespace {

// `path` made absolute: sshd resolves a relative AuthorizedKeysFile against
// the user's home, and a relative TMPDIR or --run-dir means this directory.
// Checked here, before anything is made, for what sshd_config cannot hold.
StatusOr<std::string> Absolute(const std::string& what,
                               const std::string& path) {
  std::string out = path;
  if (out.empty() || out[0] != '/') {
    std::vector<char> cwd(PATH_MAX + 1);
    if (getcwd(cwd.data(), cwd.size()) == nullptr) {
      return ErrnoError(what + " " + path + " is relative, and getcwd", errno);
    }
    out = out.empty() || out == "." ? std::string(cwd.data())
                                    : JoinPath(cwd.data(), out);
  }
  K8S_RETURN_IF_ERROR(CheckConfigPath(what, out));
  return out;
}

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
// user/ is theirs, so whatever a previous run left in it (a symlink where a
// file goes, a directory in its place) is theirs too: it is removed and made
// afresh, root's while it is filled, and given to them only at the end.
// Root writes nothing in it after that.
Status InstallUserFiles(int run_fd, const JobKeys& keys,
                        const SessionUser& user, int port, RunDir& run) {
  std::string dir = JoinPath(run.dir, "user");
  K8S_RETURN_IF_ERROR(RemoveTreeAt(run_fd, run.dir, "user")
                          .WithContext("clearing what a previous run left"));
  if (mkdirat(run_fd, "user", 0700) != 0) {
    return ErrnoError("mkdir " + dir, errno);
  }
  K8S_ASSIGN_OR_RETURN(UniqueFd user_fd,
                       OpenDirNoFollowAt(run_fd, run.dir, "user"));
  FileOwner owner{user.uid, user.gid};
  run.authorized_keys = JoinPath(dir, "authorized_keys");
  K8S_RETURN_IF_ERROR(WriteFileAtomicallyAt(user_fd.get(), dir,
                                            "authorized_keys",
                                            keys.authorized_keys, 0600, owner));
  if (!keys.user_key.empty() && !keys.host_public_key.empty()) {
    std::string identity = JoinPath(dir, "id_job");
    std::string known_hosts = JoinPath(dir, "known_hosts");
    K8S_RETURN_IF_ERROR(WriteFileAtomicallyAt(user_fd.get(), dir, "id_job",
                                              keys.user_key, 0600, owner));
    K8S_RETURN_IF_ERROR(WriteFileAtomicallyAt(
        user_fd.get(), dir, "known_hosts",
        RenderKnownHosts(port, keys.host_public_key), 0600, owner));
    run.client_config = JoinPath(dir, "config");
    K8S_ASSIGN_OR_RETURN(std::string client,
                         RenderClientConfig(port, identity, known_hosts));
    K8S_RETURN_IF_ERROR(WriteFileAtomicallyAt(user_fd.get(), dir, "config",
                                              client, 0600, owner));
  }
  if (fchown(user_fd.get(), owner.uid, owner.gid) != 0) {
    return ErrnoError("chown " + dir, errno);
  }
  return OkStatus();
}

// A named directory: made 0700 if missing, else checked: another user's,
// or one others may write to, could hold their files where sshd looks. It
// is opened without following a symlink, and written through that fd, so
// what is checked is what is written.
StatusOr<UniqueFd> PrepareNamedDir(const std::string& dir) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return ErrnoError("creating --run-dir " + dir + " (its parent must exist)",
                      errno);
  }
  std::string rule = "--run-dir " + dir + " must be a directory of uid " +
                     std::to_string(geteuid()) +
                     " that no one else can write to";
  StatusOr<UniqueFd> fd = OpenDirNoFollow(dir);
  if (!fd.ok()) return fd.status().WithContext(rule);
  struct stat st {};
  if (fstat(fd->get(), &st) != 0) return ErrnoError("stat " + dir, errno);
  if (st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
    return FailedPreconditionError(rule);
  }
  return fd;
}

// A parent others may write to, without the sticky bit, lets them rename
// the run directory away while sshd (root) runs from its path.
std::string SharedParentWarning(const std::string& dir,
                                const SessionUser& user) {
  if (user.uid == geteuid()) return "";
  size_t slash = dir.rfind('/');
  std::string parent = slash == std::string::npos ? "."
                       : slash == 0               ? "/"
                                                  : dir.substr(0, slash);
  struct stat st {};
  if (stat(parent.c_str(), &st) != 0) return "";
  bool shared =
      (st.st_mode & 022) != 0 || (st.st_uid != 0 && st.st_uid != geteuid());
  if (!shared || (st.st_mode & S_ISVTX) != 0) return "";
  return parent + " (the parent of " + dir + ") can be written by others " +
         "and has no sticky bit: a process of " + user.name + " could " +
         "rename the run directory while sshd runs from it; use a parent " +
         "only root can write, or one with mode 1777";
}

Status Fill(int run_fd, const JobKeys& keys, const SessionUser& user, int port,
            RunDir& run) {
  // Another user must pass through to reach user/; listing stays denied.
  mode_t mode = user.uid == geteuid() ? 0700 : 0711;
  if (fchmod(run_fd, mode) != 0) {
    return ErrnoError("chmod " + run.dir, errno);
  }
  run.host_key = JoinPath(run.dir, "ssh_host_key");
  run.config = JoinPath(run.dir, "sshd_config");
  run.pid_file = JoinPath(run.dir, "sshd.pid");
  // sshd refuses a host key that others can read.
  K8S_RETURN_IF_ERROR(WriteFileAtomicallyAt(run_fd, run.dir, "ssh_host_key",
                                            keys.host_key, 0600));
  return InstallUserFiles(run_fd, keys, user, port, run);
}

}  // namespace

StatusOr<RunDir> MakeRunDir(const std::string& parent, const JobKeys& keys,
                            const SessionUser& user, int port) {
  RunDir run;
  K8S_ASSIGN_OR_RETURN(std::string where, Absolute("TMPDIR", parent));
  K8S_ASSIGN_OR_RETURN(run.dir, MakePrivateDir(where));
  K8S_ASSIGN_OR_RETURN(UniqueFd run_fd, OpenDirNoFollow(run.dir));
  run.warning = SharedParentWarning(run.dir, user);
  K8S_RETURN_IF_ERROR(Fill(run_fd.get(), keys, user, port, run));
  return run;
}

StatusOr<RunDir> UseRunDir(const std::string& dir, const JobKeys& keys,
                           const SessionUser& user, int port) {
  RunDir run;
  K8S_ASSIGN_OR_RETURN(run.dir, Absolute("--run-dir", dir));
  K8S_ASSIGN_OR_RETURN(UniqueFd run_fd, PrepareNamedDir(run.dir));
  run.warning = SharedParentWarning(run.dir, user);
  K8S_RETURN_IF_ERROR(Fill(run_fd.get(), keys, user, port, run));
  return run;
}

}  // namespace k8s_agent::sshd
