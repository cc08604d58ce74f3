// SPDX-License-Identifier: Apache-2.0
#include "plugin/sshd/program_trust.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace k8s_agent::sshd {
namespace {

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Why `user` could put other code at `path`, or empty.
std::string HowReplaceable(const std::string& path, const SessionUser& user) {
  struct stat file {};
  struct stat dir {};
  std::string parent = DirOf(path);
  if (stat(path.c_str(), &file) != 0 || stat(parent.c_str(), &dir) != 0) {
    return "";
  }
  struct statvfs fs {};
  if (statvfs(parent.c_str(), &fs) == 0 && (fs.f_flag & ST_RDONLY) != 0) {
    return "";  // Nobody writes there, root included.
  }
  if (file.st_uid == user.uid) return path + " belongs to " + user.name;
  if ((file.st_mode & 022) != 0) {
    return path + " can be written by group or others";
  }
  if (dir.st_uid == user.uid) return parent + " belongs to " + user.name;
  // A sticky directory lets only a file's or the directory's owner rename
  // it away.
  if ((dir.st_mode & 022) != 0 && (dir.st_mode & S_ISVTX) == 0) {
    return parent + " can be written by group or others and is not " +
           "mounted read-only";
  }
  return "";
}

}  // namespace

std::string ReplaceableProgramWarning(const std::vector<std::string>& programs,
                                      const SessionUser& user) {
  if (user.uid == geteuid()) return "";
  for (const std::string& program : programs) {
    if (program.empty()) continue;
    std::string how = HowReplaceable(program, user);
    if (how.empty()) continue;
    return how + ": a process of " + user.name + " could replace " + program +
           ", which runs as uid " + std::to_string(geteuid()) +
           " (sshd runs sshd-session for every connection); mount the " +
           "delivery directory readOnly: true in the worker container";
  }
  return "";
}

}  // namespace k8s_agent::sshd
