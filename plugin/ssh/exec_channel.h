// SPDX-License-Identifier: Apache-2.0
// One exec channel on an authenticated session: open, exec, stdio pump,
// close, exit status. Internal to the libssh2 connection.

#ifndef K8S_AGENT_PLUGIN_SSH_EXEC_CHANNEL_H_
#define K8S_AGENT_PLUGIN_SSH_EXEC_CHANNEL_H_

#include <libssh2.h>
#include <poll.h>

#include <string>
#include <vector>

#include "plugin/base/clock.h"
#include "plugin/base/output_fd.h"
#include "plugin/base/status.h"
#include "plugin/ssh/lazy_buffer.h"
#include "plugin/ssh/libssh2_handles.h"
#include "plugin/ssh/ssh_client.h"

namespace k8s_agent::ssh {

/// Runs one command. Every libssh2 call is non-blocking; after EAGAIN the
/// channel reports the socket directions libssh2 waits for
/// (SocketEvents), and the owner calls Pump again when they are ready.
///
/// Output is copied byte for byte: channel stream 0 to stdio.out, stream 1
/// to stdio.err. Each stream has one buffer, and the channel is read for a
/// stream only when its buffer has been written out, so a slow reader
/// throttles the remote side through the SSH window instead of growing
/// memory. Writes never block (OutputFd; O_NONBLOCK is never set on fds
/// shared with mpirun): a full pipe is waited for with POLLOUT in the loop,
/// so signals and keepalives are served while a reader stalls.
///
/// When stdout cannot be written (its reader went away: EPIPE), the
/// command is stopped as ssh stops it: the channel is closed (sshd closes
/// the command's pipes, so it gets EOF or SIGPIPE) and result().local_error
/// says why. A failing stderr is only dropped, as in ssh.
///
/// One grace timer bounds every ending the agent asks for (a forwarded
/// signal, a stop after EPIPE): past it the exec ends without waiting for
/// the server any longer, and the connection teardown drops the session.
///
/// Exit status: libssh2 (1.10, and the 1.11.1 built here) cannot tell "no
/// exit-status message" from status 0: it keeps the status in a field that
/// starts at 0 and has no call saying whether one arrived. A connection
/// lost before the channel closed is an error (kUnavailable); a channel
/// closed cleanly without exit-status or exit-signal reads as status 0
/// (ssh: 255). Telling them apart needs a patched libssh2.
class ExecChannel {
 public:
  ExecChannel(LIBSSH2_SESSION* session, std::string command, StdioFds stdio,
              bool no_stdin);

  /// Does all the work possible now without blocking on the session.
  /// A non-ok status ends the command (the connection fails with it).
  Status Pump(TimePoint now);

  bool done() const { return phase_ == Phase::kDone; }
  /// The server accepted the exec request (the command ran); stays true.
  bool started() const { return accepted_; }
  const ExitResult& result() const { return result_; }

  /// poll events the session socket needs (0: none now).
  short SocketEvents() const { return socket_events_; }
  /// Appends the stdio fds to wait on.
  void CollectStdioFds(std::vector<pollfd>* fds) const;
  /// When Pump must run again without an fd event.
  TimePoint NextWake() const;

  /// Delivers signal `name` ("TERM") to the remote command with the
  /// RFC 4254 "signal" request (OpenSSH: killpg of the session); if the
  /// command still runs a second later, to its process group through a
  /// second exec channel (see SignalScript in the .cc), then sends EOF. The
  /// channel closes when the command ends; if it has not ended (or its
  /// output cannot be written out) by the grace deadline, the exec ends with
  /// result().signal = name and the connection teardown drops it.
  void RequestSignal(const std::string& name, TimePoint now);
  /// Signals go straight to the second channel: for servers known to
  /// refuse the "signal" request (it would only add a second's delay).
  void SkipSignalRequest() { signal_request_sent_ = true; }

  /// Total bytes read from the channel (both streams).
  uint64_t bytes_received() const { return bytes_received_; }

 private:
  enum class Phase { kOpen, kExec, kPump, kClose, kWaitClosed, kDone };
  // The libssh2 call that returned EAGAIN with a half-sent packet: libssh2
  // requires that exactly that call is repeated before any other send
  // (otherwise LIBSSH2_ERROR_BAD_USE), so only it may run until it ends.
  enum class Op { kNone, kRead, kWrite, kEof, kSignal };

  struct OutStream {
    int stream_id = 0;
    OutputFd sink;
    LazyBuffer buf;
    size_t begin = 0;
    size_t end = 0;
    bool discard = false;  // The fd failed (EPIPE): drop further output.
    bool pending() const { return begin < end; }
  };

  StatusOr<bool> Step(TimePoint now);
  StatusOr<bool> StepPump(TimePoint now);
  StatusOr<bool> PumpOut(OutStream* out, TimePoint now);
  void StopOnOutputError(int err, TimePoint now);
  void GiveUp();
  StatusOr<bool> PumpIn();
  StatusOr<bool> StepSignal(TimePoint now);
  void SignalSent(TimePoint now);
  // No route delivered the signal: say why at -v and end the exec now.
  void Undeliverable(const std::string& why, TimePoint now);
  void ReadExitInfo();
  void FinishExit();
  bool Allowed(Op op) const { return blocker_ == Op::kNone || blocker_ == op; }
  void NoteEagain(Op op);
  void NoteDone(Op op) {
    if (blocker_ == op) blocker_ = Op::kNone;
  }
  Status ChannelError(const std::string& what) const;

  LIBSSH2_SESSION* session_;
  ChannelPtr channel_;
  std::string command_;   // The exec request (see long_command.h).
  std::string preamble_;  // Written to stdin before the user's stdin.
  size_t preamble_sent_ = 0;
  StdioFds stdio_;
  Phase phase_ = Phase::kOpen;
  Op blocker_ = Op::kNone;
  short socket_events_ = 0;
  bool more_ = false;  // Pump stopped while it still had work.

  OutStream out_;
  OutStream err_;
  LazyBuffer in_buf_;
  size_t in_begin_ = 0;
  size_t in_end_ = 0;
  bool stdin_eof_ = false;
  bool eof_sent_ = false;

  ChannelPtr signal_channel_;  // Runs the kill helper; freed with us.
  std::string signal_;         // Requested, not yet sent.
  std::string requested_signal_;
  bool signal_sent_ = false;
  bool signal_request_sent_ = false;
  bool fallback_logged_ = false;
  bool undeliverable_ = false;  // See Undeliverable.
  // When the kill helper runs if the command outlived the signal request
  // (min: at once, the request could not be sent).
  TimePoint fallback_at_ = TimePoint::min();
  TimePoint grace_deadline_ = TimePoint::max();
  bool forced_close_ = false;
  std::string output_error_;  // Why stdout failed: the exec is stopping.

  uint64_t bytes_received_ = 0;
  // Sticky: GiveUp() ends the exec from any phase, an unaccepted one too.
  bool accepted_ = false;
  ExitResult result_;
};

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_PLUGIN_SSH_EXEC_CHANNEL_H_
