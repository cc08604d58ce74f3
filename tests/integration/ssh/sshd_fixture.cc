// SPDX-License-Identifier: Apache-2.0
// SshdFixture: a loopback test sshd through tests/lib/sshd_harness.sh.

#include "tests/integration/ssh/sshd_fixture.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "plugin/base/strings.h"
#include "plugin/base/unique_fd.h"

extern char** environ;

namespace k8s_agent::testing {
namespace {

// Set by CMake: the harness the shell tests source too.
constexpr const char* kHarness = K8S_SSHD_HARNESS;

// Options every fixture sshd gets after the setup's own (sshd keeps an
// option's first value): many connections and sessions at once, and a log
// the tests read.
constexpr const char* kFixtureConfig[] = {
    "MaxStartups 100:30:200", "MaxSessions 100", "LogLevel VERBOSE"};

Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::trunc);
  f << text;
  f.close();
  if (!f) return InternalError("cannot write " + path);
  return OkStatus();
}

// Waits (poll as a bounded timer) up to `ms` for the child to exit.
bool WaitExit(pid_t pid, int ms) {
  for (int waited = 0; waited <= ms; waited += 10) {
    pid_t r = ::waitpid(pid, nullptr, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) return true;
    ::poll(nullptr, 0, 10);
  }
  return false;
}

}  // namespace

Status SshdFixture::Run(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  char tmpl[] = "/tmp/sshd-fixture-run-XXXXXX";
  UniqueFd out(::mkstemp(tmpl));
  ::unlink(tmpl);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out.get(), 1);
  posix_spawn_file_actions_adddup2(&fa, out.get(), 2);
  // Nothing else of the test's (sockets, pipes) reaches the child, nor
  // what it leaves running: the harness's sshd and port holder.
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  pid_t pid;
  int rc = ::posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return ErrnoError("spawn " + argv[0], rc);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return OkStatus();
  std::string text(4096, '\0');
  ssize_t n = ::pread(out.get(), text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return InternalError(Join(argv, " ") + " failed: " + text);
}

StatusOr<std::unique_ptr<SshdFixture>> SshdFixture::Create(bool start) {
  return Create(SshdSetup{}, start);
}

StatusOr<std::unique_ptr<SshdFixture>> SshdFixture::Create(
    const SshdSetup& setup, bool start) {
  std::unique_ptr<SshdFixture> f(new SshdFixture());
  K8S_RETURN_IF_ERROR(f->Init(setup));
  if (start) K8S_RETURN_IF_ERROR(f->Start(/*may_move=*/true));
  return f;
}

StatusOr<std::unique_ptr<SshdFixture>> SshdFixture::CreateWithLoginUser(
    const SshdSetup& setup, const std::string& login_user) {
  std::unique_ptr<SshdFixture> f(new SshdFixture());
  K8S_RETURN_IF_ERROR(f->Init(setup, login_user));
  K8S_RETURN_IF_ERROR(f->Start(/*may_move=*/true));
  return f;
}

Status SshdFixture::Harness(const std::string& subcommand,
                            const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {"/bin/bash", kHarness, subcommand, dir_};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv);
}

StatusOr<int> SshdFixture::ReadNumber(const std::string& name) const {
  K8S_ASSIGN_OR_RETURN(std::string text, ReadFileToString(dir_ + "/" + name));
  int n = std::atoi(std::string(Trim(text)).c_str());
  if (n <= 0) return InternalError("no number in " + dir_ + "/" + name);
  return n;
}

void SshdFixture::Reap(pid_t pid) {
  if (pid > 0) WaitExit(pid, 5000);
}

Status SshdFixture::Init(const SshdSetup& setup,
                         const std::string& login_user) {
  // The harness's sshd and port holder outlive the harness command that
  // started them: as their subreaper, this process reaps them (Reap), and
  // a zombie never looks like a live sshd.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  char tmpl[] = "/tmp/sshd-fixture-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return ErrnoError("mkdtemp", errno);
  dir_ = tmpl;
  std::vector<std::string> args = {"--host-key", setup.host_key, "--user-key",
                                   setup.user_key};
  if (!login_user.empty())
    args.insert(args.end(), {"--login-user", login_user});
  for (const std::string& line : setup.config) {
    args.insert(args.end(), {"--config", line});
  }
  for (const char* line : kFixtureConfig) {
    args.insert(args.end(), {"--config", line});
  }
  Status init = Harness("init", args);
  // Whatever init got to, the holder is reaped with it.
  StatusOr<int> holder = ReadNumber("holder.pid");
  if (holder.ok()) holder_pid_ = *holder;
  K8S_RETURN_IF_ERROR(init);
  K8S_ASSIGN_OR_RETURN(port_, ReadNumber("port"));
  K8S_ASSIGN_OR_RETURN(std::string user, ReadFileToString(dir_ + "/user"));
  user_ = std::string(Trim(user));
  user_key_ = dir_ + "/id_" + setup.user_key;
  K8S_ASSIGN_OR_RETURN(
      std::string host_pub,
      ReadFileToString(dir_ + "/host_" + setup.host_key + ".pub"));
  std::vector<std::string> words = Split(std::string(Trim(host_pub)), ' ');
  if (words.size() < 2) return InternalError("bad host key " + host_pub);
  host_key_ = words[0] + " " + words[1];
  return OkStatus();
}

Status SshdFixture::Start() { return Start(/*may_move=*/false); }

Status SshdFixture::Start(bool may_move) {
  if (pid_ > 0) return OkStatus();
  Status s = Harness("start", may_move ? std::vector<std::string>{"--may-move"}
                                       : std::vector<std::string>{});
  // A move replaced the holder: reap the old one, know the new one.
  StatusOr<int> holder = ReadNumber("holder.pid");
  if (holder.ok() && *holder != holder_pid_) {
    Reap(holder_pid_);
    holder_pid_ = *holder;
  }
  if (!s.ok()) {
    StatusOr<int> failed = ReadNumber("sshd.pid");
    if (failed.ok()) Reap(*failed);
    return s;
  }
  K8S_ASSIGN_OR_RETURN(port_, ReadNumber("port"));
  K8S_ASSIGN_OR_RETURN(pid_, ReadNumber("sshd.pid"));
  return OkStatus();
}

void SshdFixture::Stop() {
  if (pid_ <= 0) return;
  (void)Harness("stop");
  Reap(pid_);
  pid_ = -1;
}

Status SshdFixture::Pause() {
  if (pid_ <= 0) return FailedPreconditionError("sshd not running");
  return Harness("signal", {"STOP"});
}

Status SshdFixture::Resume() {
  if (pid_ <= 0) return FailedPreconditionError("sshd not running");
  return Harness("signal", {"CONT"});
}

std::string SshdFixture::Log() const {
  StatusOr<std::string> text = ReadFileToString(dir_ + "/sshd.log");
  return text.ok() ? *text : "(no log)";
}

StatusOr<std::string> SshdFixture::WriteKnownHosts(const std::string& alias,
                                                   const std::string& key) {
  std::string path =
      dir_ + "/known_hosts_" + std::to_string(++known_hosts_count_);
  std::string line = "[" + alias + "]:" + std::to_string(port_) + " " +
                     (key.empty() ? host_key_ : key) + "\n";
  K8S_RETURN_IF_ERROR(WriteFile(path, line));
  return path;
}

StatusOr<std::string> SshdFixture::NewUserKey(const std::string& name) {
  std::string path = dir_ + "/" + name;
  K8S_RETURN_IF_ERROR(Run({"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N",
                           "", "-C", name, "-f", path}));
  return path;
}

SshdFixture::~SshdFixture() {
  if (!dir_.empty()) {
    (void)Harness("release");
    Reap(pid_);
    Reap(holder_pid_);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

}  // namespace k8s_agent::testing
