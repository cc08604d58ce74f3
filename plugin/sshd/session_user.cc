// SPDX-License-Identifier: Apache-2.0
#include "plugin/sshd/session_user.h"

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "plugin/base/strings.h"
#include "plugin/base/unique_fd.h"

namespace k8s_agent::sshd {
namespace {

SessionUser FromPasswd(const passwd& pw) {
  SessionUser u;
  u.name = pw.pw_name;
  u.uid = pw.pw_uid;
  u.gid = pw.pw_gid;
  u.home = pw.pw_dir ? pw.pw_dir : "";
  u.shell = pw.pw_shell ? pw.pw_shell : "";
  return u;
}

// getpwnam_r / getpwuid_r through one buffer; nullopt for "no such entry".
template <typename Key, typename Lookup>
StatusOr<std::optional<SessionUser>> LookUp(Key key, Lookup lookup) {
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  int err = lookup(key, &pw, buf.data(), buf.size(), &found);
  if (err != 0 && err != ENOENT && err != ESRCH) {
    return ErrnoError("reading the passwd database", err);
  }
  if (!found) return std::optional<SessionUser>();
  return std::optional<SessionUser>(FromPasswd(pw));
}

std::string UidText(uid_t uid) { return std::to_string(uid); }

}  // namespace

StatusOr<SessionUser> ResolveSessionUser(const std::string& requested,
                                         uid_t euid) {
  if (euid == 0) {
    std::string name = requested.empty() ? "root" : requested;
    K8S_ASSIGN_OR_RETURN(auto user, LookUp(name.c_str(), getpwnam_r));
    if (!user) {
      return FailedPreconditionError(
          "--user " + name + ": no such user in this image's passwd " +
          "database (add it to the image, or run the container as that " +
          "user's uid)");
    }
    return *user;
  }
  K8S_ASSIGN_OR_RETURN(auto self, LookUp(euid, getpwuid_r));
  if (!self) {
    return NotFoundError("uid " + UidText(euid) +
                         " has no passwd entry, and sshd serves " +
                         "only users it can look up");
  }
  if (!requested.empty() && requested != self->name) {
    return FailedPreconditionError(
        "--user " + requested + ": running as uid " + UidText(euid) + " (" +
        self->name + "), sshd can only serve " + self->name +
        " (drop --user, or run the container as root to serve " + requested +
        ")");
  }
  return *self;
}

std::string NoEntryUserName(uid_t uid) {
  // OpenShift images name their arbitrary uid "default"; a passwd that
  // already has a "default" of another uid keeps it, and ours gets the uid.
  StatusOr<std::optional<SessionUser>> taken = LookUp("default", getpwnam_r);
  return taken.ok() && !*taken ? "default" : "u" + UidText(uid);
}

std::string PasswdLine(const SessionUser& user) {
  return user.name + ":x:" + UidText(user.uid) + ":" +
         std::to_string(user.gid) +
         ":k8s-agent-sshd session user:" + user.home + ":" + user.shell + "\n";
}

StatusOr<SessionUser> AddPasswdEntry(uid_t euid, gid_t egid,
                                     const std::string& home,
                                     const std::string& passwd_file) {
  SessionUser user;
  user.uid = euid;
  user.gid = egid;
  user.name = NoEntryUserName(euid);
  // sshd chdirs there (a missing one is only a warning); "/" when the pod
  // gives no HOME, as the kubelet does for a uid its image does not list.
  user.home = home.empty() ? "/" : home;
  user.shell = "/bin/sh";
  std::string line = PasswdLine(user);
  const std::string what =
      "uid " + UidText(euid) + " has no passwd entry, and sshd serves only " +
      "users it can look up; k8s-agent-sshd adds one (" +
      line.substr(0, line.size() - 1) + ") to " + passwd_file + " when it may";
  const std::string remedy =
      ": make " + passwd_file + " group-writable in the image for the " +
      "pod's group 0 (chmod g=u " + passwd_file + ", as OpenShift images " +
      "do; not with readOnlyRootFilesystem), mount a passwd file holding " +
      "that line over it (a ConfigMap with subPath), or add a line for uid " +
      UidText(euid) + " to the image";
  // O_APPEND: one write of one short line lands whole after whatever is
  // there, even with another writer; nothing is ever rewritten.
  UniqueFd fd(::open(passwd_file.c_str(),
                     O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW));
  if (fd.get() < 0) {
    return FailedPreconditionError(what + ", and it cannot open it for " +
                                   "writing (" + std::strerror(errno) + ")" +
                                   remedy);
  }
  ssize_t n = ::write(fd.get(), line.data(), line.size());
  if (n != static_cast<ssize_t>(line.size())) {
    return FailedPreconditionError(
        what + ", and writing it failed (" +
        (n < 0 ? std::strerror(errno) : "short write") + ")" + remedy);
  }
  return user;
}

Status CheckCanLogIn(const SessionUser& user, bool sshd_is_root,
                     const std::string& shadow_file) {
  std::string shell = user.shell.empty() ? "/bin/sh" : user.shell;
  std::string base = shell.substr(shell.rfind('/') + 1);
  if (base == "nologin" || base == "false") {
    return FailedPreconditionError(
        user.name + "'s login shell is " + shell + ": sshd runs every " +
        "command through it, so every session would end at once (give the " +
        "user a shell such as /bin/sh)");
  }
  if (access(shell.c_str(), X_OK) != 0) {
    return FailedPreconditionError(
        user.name + "'s login shell " + shell + " cannot be run here (" +
        std::strerror(errno) + "): sshd runs every command through it " +
        "(set the passwd entry's shell to one the image has, e.g. /bin/sh)");
  }
  if (!sshd_is_root) return OkStatus();  // It cannot read the shadow file.
  auto shadow = ReadFileToString(shadow_file);
  if (!shadow.ok()) return OkStatus();  // No shadow file: nothing is locked.
  for (const std::string& line : Split(*shadow, '\n')) {
    std::vector<std::string> fields = Split(line, ':');
    if (fields.size() < 2 || fields[0] != user.name) continue;
    if (StartsWith(fields[1], "!")) {
      return FailedPreconditionError(
          user.name + "'s password is locked ('!' in " + shadow_file +
          ", what useradd writes), and sshd without PAM refuses locked " +
          "accounts even for key logins: unlock it without a password in " +
          "the image (usermod -p '*' " + user.name + "), or run the " +
          "container as that user");
    }
  }
  return OkStatus();
}

}  // namespace k8s_agent::sshd
