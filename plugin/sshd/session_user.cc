// SPDX-License-Identifier: Apache-2.0
#include "plugin/sshd/session_user.h"

#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "plugin/base/strings.h"

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
    return FailedPreconditionError(
        "uid " + UidText(euid) + " has no passwd entry, and sshd serves " +
        "only users it can look up (give the image an /etc/passwd line for " +
        "uid " + UidText(euid) + ", e.g. with an init step or nss_wrapper)");
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
