// SPDX-License-Identifier: Apache-2.0
// k8s-agent-sshd: a worker's entry. Makes the job's ssh Secret usable by
// sshd (copies with the owners and modes sshd insists on), writes sshd's
// config, and runs sshd in the foreground, so an unchanged image needs no
// openssh-server, sshd user, /run/sshd or host keys of its own.
//
//   k8s-agent-sshd [options] [-- SSHD-ARG...]   (options: sshd_options.cc)
//
// It execs sshd (-D -e): sshd then is the container's main process, gets
// SIGTERM directly and reaps what its sessions leave behind.

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "build_info.h"
#include "launcher/sshd_options.h"
#include "plugin/base/exit_status.h"
#include "plugin/base/files.h"
#include "plugin/base/strings.h"
#include "plugin/sshd/job_keys.h"
#include "plugin/sshd/program_trust.h"
#include "plugin/sshd/run_dir.h"
#include "plugin/sshd/session_user.h"
#include "plugin/sshd/sshd_config.h"

extern char** environ;

namespace k8s_agent::sshd {
namespace {

// The privilege-separation directory the delivered sshd was built with
// (scripts/sshd_build.sh: root-owned and not writable in any Debian-like
// image), and the one Debian's packaged sshd uses.
constexpr const char* kDeliveredPrivsepDir = "/var/lib/misc";
constexpr const char* kDebianPrivsepDir = "/run/sshd";
constexpr const char* kDebianSshd = "/usr/sbin/sshd";

std::vector<std::pair<std::string, std::string>> Environment() {
  std::vector<std::pair<std::string, std::string>> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq != std::string::npos)
      env.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

bool IsExecutable(const std::string& path) {
  return access(path.c_str(), X_OK) == 0;
}

// The delivered sshd beside this program, else the image's own.
StatusOr<std::string> FindSshd(const std::string& requested) {
  if (!requested.empty()) {
    if (requested[0] != '/') {
      return InvalidArgumentError("--sshd " + requested + ": sshd re-execs " +
                                  "itself and needs an absolute path");
    }
    if (!IsExecutable(requested)) {
      return FailedPreconditionError("--sshd " + requested + ": not an " +
                                     "executable file");
    }
    return requested;
  }
  K8S_ASSIGN_OR_RETURN(std::string self, SelfExeDir());
  std::string beside = JoinPath(self, "sshd");
  if (IsExecutable(beside)) return beside;
  if (IsExecutable(kDebianSshd)) return std::string(kDebianSshd);
  return FailedPreconditionError(
      "no sshd beside this program (" + beside + ") and none at " +
      kDebianSshd + ": copy the delivered one there (k8s-agent-deliver " +
      "does), or pass --sshd PATH");
}

// As root, sshd refuses to start without its privilege-separation
// directory, root-owned and writable by root alone.
Status EnsurePrivsepDir(const std::string& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) return ErrnoError("stat " + dir, errno);
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoError("creating sshd's privilege-separation directory " + dir,
                        errno);
    }
    return OkStatus();
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022) != 0) {
    return FailedPreconditionError(
        dir + " (sshd's privilege-separation directory) must be a " +
        "directory owned by root and writable by root only");
  }
  return OkStatus();
}

std::string Beside(const std::string& sshd, const char* name) {
  std::string path = JoinPath(sshd.substr(0, sshd.rfind('/')), name);
  return IsExecutable(path) ? path : std::string();
}

// What every session gets: the container's PATH and LD_LIBRARY_PATH (sshd
// gives a non-interactive session only its compiled-in PATH), the in-cluster
// API address and the agent's settings, so that k8s-agent run by orted here
// finds what the launcher's found.
std::vector<std::pair<std::string, std::string>> SessionEnv(
    const SshdOptions& args, const RunDir& run) {
  auto env = Environment();
  std::vector<std::string> names = {"PATH", "LD_LIBRARY_PATH",
                                    "KUBERNETES_SERVICE_HOST",
                                    "KUBERNETES_SERVICE_PORT"};
  for (const auto& [name, value] : env) {
    if (StartsWith(name, "K8S_AGENT_")) names.push_back(name);
  }
  names.insert(names.end(), args.session_env.begin(), args.session_env.end());
  bool has_config = std::any_of(env.begin(), env.end(), [](const auto& e) {
    return e.first == "K8S_AGENT_SSH_CONFIG";
  });
  if (!has_config && !run.client_config.empty()) {
    env.emplace_back("K8S_AGENT_SSH_CONFIG", run.client_config);
    names.push_back("K8S_AGENT_SSH_CONFIG");
  }
  std::vector<std::string> skipped;
  auto out = SessionEnvironment(names, env, &skipped);
  for (const std::string& name : skipped) {
    std::fprintf(stderr,
                 "k8s-agent-sshd: not handing %s to sessions: its value has "
                 "a quote, backslash or newline sshd_config cannot hold\n",
                 name.c_str());
  }
  return out;
}

void SayWhatRuns(const SshdOptions& args, const SessionUser& user,
                 const JobKeys& keys, const std::string& sshd,
                 const RunDir& run) {
  std::fprintf(stderr,
               "k8s-agent-sshd: %s on port %d for %s; host key %s (%s); "
               "authorized keys %s; files in %s\n",
               sshd.c_str(), args.port, user.name.c_str(),
               keys.host_key_path.c_str(), keys.layout.c_str(),
               keys.authorized_keys_path.c_str(), run.dir.c_str());
  if (run.client_config.empty()) {
    std::fprintf(stderr,
                 "k8s-agent-sshd: no tree-spawn client settings: %s has no "
                 "user key or no public half of the host key (.pub), so "
                 "k8s-agent run from this worker cannot check other "
                 "workers' host key\n",
                 args.keys.c_str());
  }
}

// Returns only on failure: on success sshd replaces this process.
Status Run(const SshdOptions& args) {
  bool root = geteuid() == 0;
  StatusOr<SessionUser> found = ResolveSessionUser(args.user, geteuid());
  if (found.status().code() == Code::kNotFound) {
    const char* home = std::getenv("HOME");
    found =
        AddPasswdEntry(geteuid(), getegid(), home ? home : "", "/etc/passwd");
    if (found.ok()) {
      std::fprintf(stderr,
                   "k8s-agent-sshd: uid %u had no passwd entry: added %s "
                   "(home %s) to /etc/passwd\n",
                   static_cast<unsigned>(found->uid), found->name.c_str(),
                   found->home.c_str());
    }
  }
  K8S_RETURN_IF_ERROR(found.status());
  SessionUser user = *std::move(found);
  K8S_RETURN_IF_ERROR(CheckCanLogIn(user, root, "/etc/shadow"));
  K8S_ASSIGN_OR_RETURN(JobKeys keys, LoadJobKeys(args.keys));
  K8S_ASSIGN_OR_RETURN(std::string sshd, FindSshd(args.sshd));
  // sshd_config names sshd-session and sshd-auth beside it.
  K8S_RETURN_IF_ERROR(CheckConfigPath("--sshd", sshd));
  std::string session = Beside(sshd, "sshd-session");
  if (root) {
    K8S_RETURN_IF_ERROR(EnsurePrivsepDir(
        session.empty() ? kDebianPrivsepDir : kDeliveredPrivsepDir));
  }
  const char* tmp = std::getenv("TMPDIR");
  K8S_ASSIGN_OR_RETURN(
      RunDir run,
      args.run_dir.empty()
          ? MakeRunDir(tmp && *tmp ? tmp : "/tmp", keys, user, args.port)
          : UseRunDir(args.run_dir, keys, user, args.port));
  if (!run.warning.empty()) {
    std::fprintf(stderr, "k8s-agent-sshd: warning: %s\n", run.warning.c_str());
  }
  if (root) {
    std::string self;
    if (auto dir = SelfExeDir(); dir.ok()) {
      self = JoinPath(*dir, "k8s-agent-sshd");
    }
    std::string replaceable = ReplaceableProgramWarning(
        {sshd, session, Beside(sshd, "sshd-auth"), self}, user);
    if (!replaceable.empty()) {
      std::fprintf(stderr, "k8s-agent-sshd: warning: %s\n",
                   replaceable.c_str());
    }
  }
  SshdSettings s;
  s.port = args.port;
  s.user = user.name;
  s.host_key_file = run.host_key;
  s.authorized_keys_file = run.authorized_keys;
  s.pid_file = run.pid_file;
  s.session_path = session;
  s.auth_path = Beside(sshd, "sshd-auth");
  s.log_level = args.log_level;
  s.session_env = SessionEnv(args, run);
  K8S_ASSIGN_OR_RETURN(std::string config, RenderSshdConfig(s));
  K8S_RETURN_IF_ERROR(WriteFileAtomically(run.config, config, 0600));
  SayWhatRuns(args, user, keys, sshd, run);
  std::vector<std::string> words = {sshd, "-D", "-e", "-f", run.config};
  words.insert(words.end(), args.sshd_args.begin(), args.sshd_args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  execv(sshd.c_str(), argv.data());
  return ErrnoError("exec " + sshd, errno);
}

int Main(int argc, char** argv) {
  StatusOr<SshdOptions> args =
      ParseSshdOptions(std::vector<std::string>(argv + 1, argv + argc));
  if (!args.ok()) {
    std::fprintf(stderr, "k8s-agent-sshd: %s\n",
                 args.status().message().c_str());
    return kFailureExit;
  }
  if (args->help) {
    std::fputs(SshdUsageText().c_str(), stdout);
    return 0;
  }
  if (args->version) {
    std::printf("k8s-agent-sshd %s\ncommit %s%s (%s)\n", K8S_AGENT_VERSION,
                K8S_AGENT_COMMIT, K8S_AGENT_COMMIT_DIRTY ? "-dirty" : "",
                K8S_AGENT_COMMIT_DATE);
    return 0;
  }
  Status status = Run(*args);
  std::fprintf(stderr, "k8s-agent-sshd: %s\n", status.message().c_str());
  return kFailureExit;
}

}  // namespace
}  // namespace k8s_agent::sshd

int main(int argc, char** argv) { return k8s_agent::sshd::Main(argc, argv); }
