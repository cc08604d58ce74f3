// SPDX-License-Identifier: Apache-2.0
// The machine behind ConfigEnv: files, glob(3), gethostname, Match exec.

#include <fcntl.h>
#include <glob.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "plugin/base/strings.h"
#include "plugin/base/unique_fd.h"
#include "plugin/ssh/ssh_config.h"

extern char** environ;

namespace k8s_agent::ssh {
namespace {

std::vector<std::string> Glob(const std::string& pattern) {
  glob_t g;
  std::vector<std::string> out;
  // GLOB_TILDE for "~user/..."; results come sorted, as ssh reads them.
  if (::glob(pattern.c_str(), GLOB_TILDE, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.push_back(g.gl_pathv[i]);
  }
  ::globfree(&g);
  return out;
}

// ssh's execute_in_shell(): $SHELL -c COMMAND, stdin and stdout on
// /dev/null (stdout is the session's), stderr left as it is. Config
// reading happens before the event loop starts, so waiting here blocks
// nothing else.
StatusOr<bool> RunExec(const std::string& command) {
  const char* shell = std::getenv("SHELL");
  if (shell == nullptr || *shell == '\0') shell = "/bin/sh";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  std::string arg0 = shell, dash_c = "-c", cmd = command;
  char* argv[] = {arg0.data(), dash_c.data(), cmd.data(), nullptr};
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, shell, &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return InvalidArgumentError("cannot run " + std::string(shell) + ": " +
                                std::strerror(rc));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return InvalidArgumentError(std::string("waitpid: ") +
                                  std::strerror(errno));
    }
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// The file's text with the owner and mode of the fd it came from, so what
// is checked is what is read. O_NONBLOCK: opening a FIFO must not wait;
// anything but a regular file is returned unread, for the reader to refuse.
StatusOr<ConfigText> ReadConfigFile(const std::string& path) {
  constexpr size_t kMaxBytes = 1 << 20;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid()) return ErrnoError("open " + path, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoError("stat " + path, errno);
  ConfigText file;
  file.owner = st.st_uid;
  file.mode = st.st_mode;
  if (!S_ISREG(st.st_mode)) return file;
  char buf[8192];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("read " + path, errno);
    if (n == 0) break;
    file.text.append(buf, static_cast<size_t>(n));
    if (file.text.size() > kMaxBytes) {
      return TooLargeError(path + ": larger than " + std::to_string(kMaxBytes) +
                           " bytes");
    }
  }
  return file;
}

std::string LocalHostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

}  // namespace

ConfigEnv SystemConfigEnv(const std::string& home) {
  ConfigEnv env;
  env.local_user = PasswdUserName(::getuid()).value_or("");
  env.home = home;
  env.local_host = LocalHostName();
  env.uid = ::getuid();
  env.read_file = &ReadConfigFile;
  env.glob = &Glob;
  env.run_exec = &RunExec;
  return env;
}

}  // namespace k8s_agent::ssh
