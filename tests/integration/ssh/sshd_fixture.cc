// SPDX-License-Identifier: Apache-2.0
// SshdFixture: keys, config and lifetime of a loopback test sshd.

#include "tests/integration/ssh/sshd_fixture.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "plugin/base/strings.h"
#include "plugin/base/unique_fd.h"

extern char** environ;

namespace k8s_agent::testing {
namespace {

constexpr const char* kSshd = "/usr/sbin/sshd";

Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::trunc);
  f << text;
  f.close();
  if (!f) return InternalError("cannot write " + path);
  return OkStatus();
}

int FreePort() {
  UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    return -1;
  }
  socklen_t len = sizeof(a);
  ::getsockname(s.get(), reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
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

pid_t ParentOf(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(f, line);
  size_t close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(line.substr(close + 2));
  char state;
  pid_t ppid = -1;
  rest >> state >> ppid;
  return ppid;
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

Status SshdFixture::KeyGen(const std::string& type, const std::string& path,
                           const std::string& comment) {
  std::vector<std::string> argv = {
      "/usr/bin/ssh-keygen", "-q", "-N", "", "-C", comment, "-f", path};
  size_t dash = type.find('-');
  argv.insert(argv.end(), {"-t", type.substr(0, dash)});
  if (dash != std::string::npos) {
    argv.insert(argv.end(), {"-b", type.substr(dash + 1)});
  }
  return Run(argv);
}

StatusOr<std::unique_ptr<SshdFixture>> SshdFixture::Create(bool start) {
  return Create(SshdSetup{}, start);
}

StatusOr<std::unique_ptr<SshdFixture>> SshdFixture::Create(
    const SshdSetup& setup, bool start) {
  std::unique_ptr<SshdFixture> f(new SshdFixture());
  K8S_RETURN_IF_ERROR(f->Init(setup));
  if (start) K8S_RETURN_IF_ERROR(f->Start());
  return f;
}

StatusOr<std::unique_ptr<SshdFixture>> SshdFixture::CreateWithLoginUser(
    const SshdSetup& setup, const std::string& login_user) {
  std::unique_ptr<SshdFixture> f(new SshdFixture());
  K8S_RETURN_IF_ERROR(f->Init(setup, login_user));
  K8S_RETURN_IF_ERROR(f->Start());
  return f;
}

Status SshdFixture::Init(const SshdSetup& setup,
                         const std::string& login_user) {
  char tmpl[] = "/tmp/sshd-fixture-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return ErrnoError("mkdtemp", errno);
  dir_ = tmpl;
  struct passwd* pw = ::getpwuid(::getuid());
  user_ = pw != nullptr ? pw->pw_name : "root";
  port_ = FreePort();
  if (port_ <= 0) return InternalError("no free port");
  std::string host_file = dir_ + "/host_" + setup.host_key;
  user_key_ = dir_ + "/id_" + setup.user_key;
  K8S_RETURN_IF_ERROR(KeyGen(setup.host_key, host_file, "fixture-host"));
  K8S_RETURN_IF_ERROR(KeyGen(setup.user_key, user_key_, "fixture-user"));
  K8S_ASSIGN_OR_RETURN(std::string pub, ReadFileToString(user_key_ + ".pub"));
  K8S_RETURN_IF_ERROR(WriteFile(dir_ + "/authorized_keys", pub));
  if (!login_user.empty() && ::geteuid() == 0) {
    K8S_RETURN_IF_ERROR(AddLoginUser(login_user));
  }
  K8S_ASSIGN_OR_RETURN(std::string host_pub,
                       ReadFileToString(host_file + ".pub"));
  std::vector<std::string> words = Split(std::string(Trim(host_pub)), ' ');
  if (words.size() < 2) return InternalError("bad host key " + host_pub);
  host_key_ = words[0] + " " + words[1];
  std::string cfg = "Port " + std::to_string(port_) +
                    "\n"
                    "ListenAddress 127.0.0.1\n"
                    "HostKey " +
                    host_file +
                    "\n"
                    "PidFile " +
                    dir_ +
                    "/sshd.pid\n"
                    "AuthorizedKeysFile " +
                    dir_ +
                    "/authorized_keys\n"
                    "StrictModes no\n"
                    "UsePAM no\n"
                    "PubkeyAuthentication yes\n"
                    "PasswordAuthentication no\n"
                    "KbdInteractiveAuthentication no\n"
                    "PermitRootLogin prohibit-password\n"
                    "UseDNS no\n"
                    "MaxStartups 100:30:200\n"
                    "MaxSessions 100\n"
                    "LogLevel VERBOSE\n";
  // sshd keeps the first value of an option: the setup's lines go first.
  std::string extra;
  for (const std::string& line : setup.config) extra += line + "\n";
  return WriteFile(dir_ + "/sshd_config", extra + cfg);
}

// A uid no real account uses; the user's home is the fixture's dir, which
// it must be able to read (sshd reads authorized_keys as the user).
constexpr int kLoginUid = 47213;

Status SshdFixture::AddLoginUser(const std::string& name) {
  K8S_ASSIGN_OR_RETURN(std::string passwd, ReadFileToString("/etc/passwd"));
  K8S_ASSIGN_OR_RETURN(std::string group, ReadFileToString("/etc/group"));
  std::string id = std::to_string(kLoginUid);
  K8S_RETURN_IF_ERROR(
      WriteFile(dir_ + "/passwd", passwd + name + ":x:" + id + ":" + id +
                                      ":fixture:" + dir_ + ":/bin/sh\n"));
  K8S_RETURN_IF_ERROR(
      WriteFile(dir_ + "/group", group + name + ":x:" + id + ":\n"));
  for (const char* f : {"", "/passwd", "/group", "/authorized_keys"}) {
    if (::chmod((dir_ + f).c_str(), 0755) != 0) {
      return ErrnoError("chmod " + dir_ + f, errno);
    }
  }
  bind_mounts_.emplace_back(dir_ + "/passwd", "/etc/passwd");
  bind_mounts_.emplace_back(dir_ + "/group", "/etc/group");
  user_ = name;
  return OkStatus();
}

Status SshdFixture::Start() {
  if (pid_ > 0) return OkStatus();
  // FreePort() must let its port go before sshd binds it, and another test
  // may take it in between: then this sshd cannot bind, and only the first
  // start moves to a new port (a restart keeps the address tests know).
  for (int attempt = 1;; ++attempt) {
    Status s = SpawnAndWaitListening();
    bool port_taken =
        !s.ok() && !started_ &&
        s.message().find("Address already in use") != std::string::npos;
    if (!port_taken || attempt == 5) {
      if (s.ok()) started_ = true;
      return s;
    }
    int old_port = port_;
    port_ = FreePort();
    if (port_ <= 0) return InternalError("no free port");
    std::string cfg = dir_ + "/sshd_config";
    K8S_ASSIGN_OR_RETURN(std::string text, ReadFileToString(cfg));
    std::string from = "Port " + std::to_string(old_port) + "\n";
    size_t at = text.find(from);
    if (at == std::string::npos) return InternalError("no Port line: " + cfg);
    text.replace(at, from.size(), "Port " + std::to_string(port_) + "\n");
    K8S_RETURN_IF_ERROR(WriteFile(cfg, text));
  }
}

Status SshdFixture::SpawnAndWaitListening() {
  ::mkdir("/run/sshd", 0755);  // G4: privsep dir; the unit never ran.
  std::string cfg = dir_ + "/sshd_config";
  std::string log = dir_ + "/sshd.log";
  std::vector<std::string> argv = {kSshd, "-D", "-e", "-f", cfg};
  // G2: root's ~/.bashrc (pyenv) adds ~0.6 s to every remote command.
  // Hide it from this sshd only, in a private mount namespace (with the
  // login user's passwd, if any); the same pid then execs sshd, so Stop()
  // still has the right pid.
  std::vector<std::pair<std::string, std::string>> mounts = bind_mounts_;
  struct passwd* pw = ::getpwuid(::getuid());
  std::string bashrc =
      pw != nullptr ? std::string(pw->pw_dir) + "/.bashrc" : std::string();
  if (::geteuid() == 0 && !bashrc.empty() &&
      ::access(bashrc.c_str(), F_OK) == 0) {
    std::string empty = dir_ + "/empty_bashrc";
    K8S_RETURN_IF_ERROR(WriteFile(empty, ""));
    mounts.emplace_back(empty, bashrc);
  }
  if (!mounts.empty() && ::access("/usr/bin/unshare", X_OK) == 0) {
    std::string script;
    for (const auto& [from, to] : mounts) {
      script += "mount --bind " + from + " " + to + " && ";
    }
    argv = {"/usr/bin/unshare", "-m", "/bin/sh", "-c",
            script + "exec " + std::string(kSshd) + " -D -e -f " + cfg};
  }
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  // A restart appends to the same log: read only what this start writes.
  struct stat log_st {};
  const size_t log_start = ::stat(log.c_str(), &log_st) == 0
                               ? static_cast<size_t>(log_st.st_size)
                               : 0;
  int rc = ::posix_spawn(&pid_, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    pid_ = -1;
    return ErrnoError("spawn sshd", rc);
  }
  // Ready is this sshd's own "Server listening" line (logged after its
  // listen()), read from where this start began: a connect alone could
  // reach another test's sshd on a port this one failed to bind.
  const std::string listening =
      "Server listening on 127.0.0.1 port " + std::to_string(port_) + ".";
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (Log().find(listening, log_start) != std::string::npos) {
      return OkStatus();
    }
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return InternalError("sshd exited: " + Log().substr(log_start));
    }
    ::poll(nullptr, 0, 10);
  }
  Stop();
  return InternalError("sshd did not listen within 30 s: " +
                       Log().substr(log_start));
}

std::vector<pid_t> SshdFixture::Tree() const {
  std::vector<pid_t> tree;
  if (pid_ <= 0) return tree;
  tree.push_back(pid_);
  std::vector<std::pair<pid_t, pid_t>> all;  // (pid, ppid)
  if (DIR* d = ::opendir("/proc")) {
    while (dirent* e = ::readdir(d)) {
      pid_t p = static_cast<pid_t>(std::atoi(e->d_name));
      if (p > 0) all.emplace_back(p, ParentOf(p));
    }
    ::closedir(d);
  }
  for (size_t i = 0; i < tree.size(); ++i) {
    for (const auto& [p, pp] : all) {
      if (pp == tree[i]) tree.push_back(p);
    }
  }
  return tree;
}

void SshdFixture::Stop() {
  if (pid_ <= 0) return;
  std::vector<pid_t> tree = Tree();
  for (pid_t p : tree) ::kill(p, SIGKILL);
  for (pid_t p : tree) ::kill(p, SIGCONT);
  WaitExit(pid_, 5000);
  pid_ = -1;
}

Status SshdFixture::Pause() {
  if (pid_ <= 0) return FailedPreconditionError("sshd not running");
  for (pid_t p : Tree()) ::kill(p, SIGSTOP);
  return OkStatus();
}

Status SshdFixture::Resume() {
  if (pid_ <= 0) return FailedPreconditionError("sshd not running");
  for (pid_t p : Tree()) ::kill(p, SIGCONT);
  return OkStatus();
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
  Stop();
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

}  // namespace k8s_agent::testing
