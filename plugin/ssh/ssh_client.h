// SPDX-License-Identifier: Apache-2.0
// One SSH connection to a pod: connect, handshake, verify, authenticate,
// then run one command with stdio streamed. Non-blocking, loop-driven.

#ifndef K8S_AGENT_PLUGIN_SSH_SSH_CLIENT_H_
#define K8S_AGENT_PLUGIN_SSH_SSH_CLIENT_H_

#include <memory>
#include <string>

#include "plugin/base/event_loop.h"
#include "plugin/base/status.h"
#include "plugin/ssh/ssh_options.h"

namespace k8s_agent::ssh {

/// How the remote command ended.
struct ExitResult {
  int exit_status = 0;  ///< Valid when signal is empty.
  std::string signal;   ///< "TERM", "KILL", ... when killed by one.
  std::string signal_message;
  /// Non-empty when the agent stopped the command itself because its
  /// stdout could not be written (the reader went away); exit_status is
  /// then 255, as ssh exits.
  std::string local_error;
};

/// Where the remote command's stdio goes. Defaults are the agent's own.
struct StdioFds {
  int in = 0;  ///< -1: send EOF at once.
  int out = 1;
  int err = 2;
};

/// The connection state machine:
///
///   kConnecting --TCP up--> kHandshaking --keys ok--> kAuthenticating
///        --auth ok--> kReady --Exec()--> kRunning --exit--> kExited
///   any state --error--> kFailed (status() says why; ClassifyForRetry tells
///   whether a fresh attempt may succeed, e.g. refused while sshd starts)
///
/// Host keys are verified between handshake and auth; a mismatch is
/// kFailedPrecondition and is never retried.
class SshConnection : public Pollable {
 public:
  enum class State {
    kConnecting,
    kHandshaking,
    kAuthenticating,
    kReady,
    kRunning,
    kExited,
    kFailed
  };

  ~SshConnection() override = default;

  virtual State state() const = 0;
  /// kFailed only.
  virtual const Status& status() const = 0;
  /// kFailed: the TCP connect was refused (nothing listens yet, as while
  /// sshd starts), the one failure worth retrying almost at once.
  virtual bool refused() const { return false; }
  /// kFailed before TCP was up (refused, unreachable, a connect timeout):
  /// nothing answered at this address, so another of the pod's addresses
  /// (dual-stack podIPs) may still.
  virtual bool connect_failed() const { return refused(); }
  /// Starts `command` (one string for the remote shell, no pty) once
  /// kReady. Stdio is pumped by the loop; kExited when the remote side
  /// reported its exit and the output is drained.
  virtual Status Exec(const std::string& command, StdioFds stdio) = 0;
  /// After Exec(): the server accepted the exec request (the command runs);
  /// stays true once the command exited.
  virtual bool command_started() const = 0;
  /// kExited only.
  virtual const ExitResult& exit_result() const = 0;
  /// Forwards a signal ("TERM") to the remote command and drops its
  /// pending stdin (EOF follows); the channel stays open for the command's
  /// last output and exit status. The RFC 4254 "signal" request goes first
  /// (not to OpenSSH as root, which refuses it); if it fails, or the command
  /// still runs 1 s later, a second exec channel signals the command's
  /// process group. If the command has not ended 2 s after that, the
  /// connection stops waiting and reports it killed by the signal (so up
  /// to ~3 s when the request is sent, ~2 s as root on OpenSSH).
  virtual void Signal(const std::string& name) = 0;
};

/// Makes connections. Abstract so the per-host wait is unit-tested with
/// scripted attempts instead of sockets.
class SshConnector {
 public:
  virtual ~SshConnector() = default;
  /// Connects to `ip` with one host's settings (ssh reads its config per
  /// destination): its port, user, keys, and host keys checked under its
  /// host_key_alias (the host Open MPI gave, unless HostName or
  /// HostKeyAlias say otherwise).
  virtual std::unique_ptr<SshConnection> Connect(
      const ResolvedSshOptions& options, const std::string& ip,
      TimePoint now) = 0;
};

/// The libssh2 implementation.
std::unique_ptr<SshConnector> NewLibssh2Connector(Clock* clock);

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_PLUGIN_SSH_SSH_CLIENT_H_
