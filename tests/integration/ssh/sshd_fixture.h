// SPDX-License-Identifier: Apache-2.0
// A real OpenSSH sshd on 127.0.0.1:<free port> with test-generated keys,
// run by the tests' one sshd harness (tests/lib/sshd_harness.sh).

#ifndef K8S_AGENT_TESTS_INTEGRATION_SSH_SSHD_FIXTURE_H_
#define K8S_AGENT_TESTS_INTEGRATION_SSH_SSHD_FIXTURE_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "plugin/base/status.h"

namespace k8s_agent::testing {

/// Key types as "ed25519", "ecdsa-384", "rsa-3072", "dsa" (ssh-keygen's
/// -t and -b), and sshd_config lines that override the fixture's own.
struct SshdSetup {
  std::string host_key = "ed25519";
  std::string user_key = "ed25519";
  std::vector<std::string> config;
};

/// Owns a temp dir with a host key, an authorized user key, an
/// sshd_config, a port reserved for it, and (once started) an `sshd -D -e`
/// process: tests/lib/sshd_harness.sh does all of that, so the shell tests
/// and these run the same sshd. Everything it started is killed by pid
/// and the dir removed on destruction.
///
///   auto sshd = SshdFixture::Create();          // started, port accepting
///   auto later = SshdFixture::Create(false);    // port chosen, not started
class SshdFixture {
 public:
  /// Generates keys and config; starts sshd unless `start` is false.
  static StatusOr<std::unique_ptr<SshdFixture>> Create(bool start = true);
  static StatusOr<std::unique_ptr<SshdFixture>> Create(const SshdSetup& setup,
                                                       bool start = true);
  /// Started, and as root logging in as `login_user` instead: a uid that
  /// exists only for this sshd (its /etc/passwd and /etc/group are copies
  /// with the user added, bind-mounted in its private mount namespace).
  /// OpenSSH treats a root login differently (no privilege separation
  /// after auth, so no "signal" request): tests of a non-root session
  /// need one. Not root, the current user is already not root.
  static StatusOr<std::unique_ptr<SshdFixture>> CreateWithLoginUser(
      const SshdSetup& setup, const std::string& login_user);
  ~SshdFixture();
  SshdFixture(const SshdFixture&) = delete;
  SshdFixture& operator=(const SshdFixture&) = delete;

  /// Starts sshd and waits (up to 30 s) until it listens on port(), which
  /// stays the same: callers may know it already (Create(false), a
  /// restart after Stop()). Only Create(true)'s start, before anybody
  /// knows the port, moves to another if a process took it.
  Status Start();
  /// Kills sshd and every process under it (sessions, remote commands).
  void Stop();
  /// SIGSTOP / SIGCONT sshd and all its descendants (a "dead" peer).
  Status Pause();
  Status Resume();

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  const std::string& dir() const { return dir_; }
  /// The user sshd lets in with user_key() (the current user).
  const std::string& user() const { return user_; }
  /// Private key in authorized_keys (its .pub sits next to it).
  const std::string& user_key() const { return user_key_; }
  /// "ssh-ed25519 AAAA..." of the server.
  const std::string& host_key() const { return host_key_; }
  /// sshd's log (stderr), for failure messages.
  std::string Log() const;

  /// Writes a known_hosts file naming the host key under "[alias]:port"
  /// and returns its path. `key` overrides the key ("ssh-ed25519 AAAA").
  StatusOr<std::string> WriteKnownHosts(const std::string& alias,
                                        const std::string& key = "");
  /// Generates another ed25519 key pair (not authorized); returns the
  /// private key path.
  StatusOr<std::string> NewUserKey(const std::string& name);

  /// Runs argv to completion; non-zero exit is an error with its output.
  static Status Run(const std::vector<std::string>& argv);

 private:
  SshdFixture() = default;
  Status Init(const SshdSetup& setup, const std::string& login_user = "");
  Status Start(bool may_move);
  /// Runs `sshd_harness.sh SUBCOMMAND dir_ ARGS...`.
  Status Harness(const std::string& subcommand,
                 const std::vector<std::string>& args = {}) const;
  /// Reads the int the harness left in dir_/`name`.
  StatusOr<int> ReadNumber(const std::string& name) const;
  /// Reaps `pid` once the harness ended it: sshd and the port's holder
  /// outlive the harness command, so this process is their subreaper.
  static void Reap(pid_t pid);

  std::string dir_;
  std::string user_;
  std::string host_key_;
  std::string user_key_;
  int port_ = 0;
  pid_t pid_ = -1;
  pid_t holder_pid_ = -1;  // Keeps port_ reserved (see sshd_harness.sh).
  int known_hosts_count_ = 0;
};

}  // namespace k8s_agent::testing

#endif  // K8S_AGENT_TESTS_INTEGRATION_SSH_SSHD_FIXTURE_H_
