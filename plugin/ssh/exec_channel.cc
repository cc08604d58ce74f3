// SPDX-License-Identifier: Apache-2.0
// ExecChannel: the non-blocking exec channel and its stdio pump.

#include "plugin/ssh/exec_channel.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "plugin/base/exit_status.h"
#include "plugin/base/log.h"
#include "plugin/base/strings.h"
#include "plugin/ssh/block_directions.h"
#include "plugin/ssh/long_command.h"

namespace k8s_agent::ssh {
namespace {

// OpenSSH's client uses a 2 MiB session window; twice that keeps a fast
// link busy while we write out the previous chunk.
constexpr unsigned kWindowBytes = 4u << 20;
// libssh2 1.10 cannot receive packets above ~35000 bytes.
constexpr unsigned kMaxPacketBytes = 32768;
// One read drains many queued packets, so big chunks cut syscalls.
constexpr size_t kOutChunkBytes = 256 << 10;
constexpr size_t kInChunkBytes = 64 << 10;
// Work done per Pump before yielding to the loop (timers, other fds).
constexpr int kMaxStepsPerPump = 64;
// After a forwarded signal (or a stop after EPIPE), how long the command
// and sshd get to end the channel before the agent stops waiting for them.
constexpr auto kSignalGrace = std::chrono::seconds(2);
// After the RFC 4254 "signal" request (no reply is defined for it), how
// long the command gets to end before the kill helper channel signals it
// again: OpenSSH refuses the request for ForceCommand and subsystem
// sessions, other servers may not implement it.
constexpr auto kSignalRequestGrace = std::chrono::seconds(1);

// Whether `fd` would not block for `events` right now.
bool Ready(int fd, short events) {
  pollfd p{fd, events, 0};
  int n;
  do {
    n = ::poll(&p, 1, 0);
  } while (n < 0 && errno == EINTR);
  return n > 0 && p.revents != 0;
}

}  // namespace

ExecChannel::ExecChannel(LIBSSH2_SESSION* session, std::string command,
                         StdioFds stdio, bool no_stdin)
    : session_(session), stdio_(stdio) {
  ExecPlan plan = PlanExec(command);
  command_ = std::move(plan.request);
  preamble_ = std::move(plan.stdin_preamble);
  out_.stream_id = 0;
  out_.sink = OutputFd(stdio.out);
  out_.discard = stdio.out < 0;
  out_.buf.Allocate(kOutChunkBytes);
  err_.stream_id = SSH_EXTENDED_DATA_STDERR;
  err_.sink = OutputFd(stdio.err);
  err_.discard = stdio.err < 0;
  err_.buf.Allocate(kOutChunkBytes);
  stdin_eof_ = no_stdin || stdio.in < 0;
  if (!stdin_eof_) in_buf_.Allocate(kInChunkBytes);
}

Status ExecChannel::ChannelError(const std::string& what) const {
  int err = libssh2_session_last_errno(session_);
  std::string message = what + ": " + LastError(session_);
  switch (err) {
    case LIBSSH2_ERROR_CHANNEL_REQUEST_DENIED:
    case LIBSSH2_ERROR_CHANNEL_FAILURE:
      return FailedPreconditionError(message);
    default:
      // Socket errors and disconnects: the connection is gone.
      return UnavailableError(message);
  }
}

void ExecChannel::NoteEagain(Op op) {
  int dirs = libssh2_session_block_directions(session_);
  socket_events_ |= DirectionsToEvents(dirs);
  if (dirs & LIBSSH2_SESSION_BLOCK_OUTBOUND) {
    blocker_ = op;
  } else if (blocker_ == op) {
    blocker_ = Op::kNone;
  }
}

void ExecChannel::CollectStdioFds(std::vector<pollfd>* fds) const {
  if (phase_ != Phase::kPump) return;
  for (const OutStream* o : {&out_, &err_}) {
    if (o->pending() && !o->discard) {
      fds->push_back({o->sink.fd(), POLLOUT, 0});
    }
  }
  // Our stdin waits while the command itself is still being sent.
  if (!stdin_eof_ && in_begin_ == in_end_ &&
      preamble_sent_ == preamble_.size()) {
    fds->push_back({stdio_.in, POLLIN, 0});
  }
}

TimePoint ExecChannel::NextWake() const {
  if (more_) return TimePoint::min();
  // Only the pump phase steps the signal; elsewhere a past fallback time
  // would wake the loop for nothing, again and again.
  if (!signal_.empty() && phase_ == Phase::kPump) {
    return std::min(grace_deadline_, fallback_at_);
  }
  return grace_deadline_;
}

void ExecChannel::RequestSignal(const std::string& name, TimePoint now) {
  if (phase_ == Phase::kDone || !signal_.empty() || signal_sent_) return;
  if (!output_error_.empty()) return;  // Already stopping the command.
  // The name goes into a remote shell command: only "TERM", "INT", "9"...
  if (name.empty() || name.size() > 16) return;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) return;
  }
  signal_ = name;
  requested_signal_ = name;
  // Bounds the wait even if the request itself never completes.
  grace_deadline_ = now + kSignalGrace + kSignalGrace;
}

Status ExecChannel::Pump(TimePoint now) {
  socket_events_ = 0;
  more_ = false;
  for (int i = 0; i < kMaxStepsPerPump; ++i) {
    StatusOr<bool> progressed = Step(now);
    if (!progressed.ok()) return progressed.status();
    if (!*progressed) return OkStatus();
    socket_events_ = 0;  // Only the last, unfinished pass decides.
  }
  more_ = phase_ != Phase::kDone;
  return OkStatus();
}

StatusOr<bool> ExecChannel::Step(TimePoint now) {
  if (phase_ != Phase::kDone && now >= grace_deadline_) {
    GiveUp();
    return true;
  }
  switch (phase_) {
    case Phase::kOpen: {
      LIBSSH2_CHANNEL* ch =
          libssh2_channel_open_ex(session_, "session", sizeof("session") - 1,
                                  kWindowBytes, kMaxPacketBytes, nullptr, 0);
      if (ch == nullptr) {
        if (libssh2_session_last_errno(session_) == LIBSSH2_ERROR_EAGAIN) {
          NoteEagain(Op::kNone);
          return false;
        }
        return ChannelError("opening a session channel");
      }
      channel_.reset(ch);
      phase_ = Phase::kExec;
      return true;
    }
    case Phase::kExec: {
      int rc = libssh2_channel_exec(channel_.get(), command_.c_str());
      if (rc == LIBSSH2_ERROR_EAGAIN) {
        NoteEagain(Op::kNone);
        return false;
      }
      if (rc != 0) return ChannelError("exec request");
      accepted_ = true;
      phase_ = Phase::kPump;
      return true;
    }
    case Phase::kPump:
      return StepPump(now);
    case Phase::kClose: {
      int rc = libssh2_channel_close(channel_.get());
      if (rc == LIBSSH2_ERROR_EAGAIN) {
        NoteEagain(Op::kNone);
        return false;
      }
      if (rc != 0) return ChannelError("closing the channel");
      phase_ = Phase::kWaitClosed;
      return true;
    }
    case Phase::kWaitClosed: {
      // After a stop, sshd answers our CLOSE without an EOF first, and
      // libssh2_channel_close has already waited for that CLOSE.
      if (!forced_close_ && output_error_.empty()) {
        int rc = libssh2_channel_wait_closed(channel_.get());
        if (rc == LIBSSH2_ERROR_EAGAIN) {
          NoteEagain(Op::kNone);
          return false;
        }
        if (rc != 0) return ChannelError("waiting for the channel to close");
      }
      FinishExit();
      return true;
    }
    case Phase::kDone:
      return false;
  }
  return false;
}

StatusOr<bool> ExecChannel::StepPump(TimePoint now) {
  bool progress = false;
  if (!signal_.empty() && Allowed(Op::kSignal)) {
    StatusOr<bool> p = StepSignal(now);
    if (!p.ok()) return p.status();
    progress = progress || *p;
  }
  for (OutStream* o : {&out_, &err_}) {
    StatusOr<bool> p = PumpOut(o, now);
    if (!p.ok()) return p.status();
    progress = progress || *p;
  }
  StatusOr<bool> p = PumpIn();
  if (!p.ok()) return p.status();
  progress = progress || *p;

  // Stdout is gone: close the channel (sshd then closes the command's
  // pipes) once no half-sent packet is in the way.
  if (!output_error_.empty() && blocker_ == Op::kNone) {
    phase_ = Phase::kClose;
    return true;
  }

  // The remote side sent EOF (or closed) and everything it sent has been
  // written out: finish now, whatever stdin still holds, so the agent
  // exits as soon as the command has.
  if (!out_.pending() && !err_.pending() && blocker_ == Op::kNone &&
      libssh2_channel_eof(channel_.get())) {
    phase_ = Phase::kClose;
    return true;
  }
  // Output may arrive at any time while a stream is free to take it.
  // Reading drains the socket, so this cannot spin.
  if (!out_.pending() || !err_.pending()) socket_events_ |= POLLIN;
  return progress;
}

StatusOr<bool> ExecChannel::PumpOut(OutStream* o, TimePoint now) {
  bool progress = false;
  if (o->pending()) {
    if (o->discard) {
      o->begin = o->end = 0;
    } else {
      // Until the fd is full: a slow reader slows the remote side down
      // (through the window), it does not make us buffer or block.
      while (o->pending()) {
        ssize_t n = o->sink.Write(o->buf.data() + o->begin, o->end - o->begin);
        if (n > 0) {
          o->begin += static_cast<size_t>(n);
          progress = true;
        } else if (n < 0 && errno == EINTR) {
          continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
          break;  // CollectStdioFds waits for POLLOUT.
        } else {
          int err = n < 0 ? errno : EIO;
          o->discard = true;
          o->begin = o->end = 0;
          if (o->stream_id == 0) {
            StopOnOutputError(err, now);
          } else {
            LogDebug(std::string("ssh: writing remote stderr failed: ") +
                     std::strerror(err) + "; discarding it");
          }
          progress = true;
        }
      }
      if (!o->pending()) o->begin = o->end = 0;
    }
  }
  if (!o->pending() && Allowed(Op::kRead)) {
    ssize_t n = libssh2_channel_read_ex(channel_.get(), o->stream_id,
                                        o->buf.data(), o->buf.size());
    if (n > 0) {
      NoteDone(Op::kRead);
      o->begin = 0;
      o->end = static_cast<size_t>(n);
      bytes_received_ += static_cast<uint64_t>(n);
      if (o->discard) o->end = 0;
      progress = true;
    } else if (n == LIBSSH2_ERROR_EAGAIN) {
      NoteEagain(Op::kRead);
    } else if (n == 0) {
      NoteDone(Op::kRead);  // Nothing for this stream (or its EOF).
    } else {
      return ChannelError("reading the channel");
    }
  }
  return progress;
}

StatusOr<bool> ExecChannel::PumpIn() {
  bool progress = false;
  if (eof_sent_) return false;
  if (preamble_sent_ < preamble_.size()) {
    // The command, for the remote dd, before any byte of our stdin or EOF.
    if (!Allowed(Op::kWrite)) return false;
    ssize_t n =
        libssh2_channel_write(channel_.get(), preamble_.data() + preamble_sent_,
                              preamble_.size() - preamble_sent_);
    if (n > 0) {
      NoteDone(Op::kWrite);
      preamble_sent_ += static_cast<size_t>(n);
      return true;
    }
    if (n == LIBSSH2_ERROR_EAGAIN || n == 0) {
      NoteEagain(Op::kWrite);
      return false;
    }
    return ChannelError("sending the long command on stdin");
  }
  if (in_begin_ < in_end_ && Allowed(Op::kWrite)) {
    ssize_t n = libssh2_channel_write(
        channel_.get(), in_buf_.data() + in_begin_, in_end_ - in_begin_);
    if (n > 0) {
      NoteDone(Op::kWrite);
      in_begin_ += static_cast<size_t>(n);
      if (in_begin_ == in_end_) in_begin_ = in_end_ = 0;
      progress = true;
    } else if (n == LIBSSH2_ERROR_EAGAIN || n == 0) {
      NoteEagain(Op::kWrite);  // 0: the remote window is full.
    } else if (n == LIBSSH2_ERROR_CHANNEL_EOF_SENT ||
               n == LIBSSH2_ERROR_CHANNEL_CLOSED) {
      // The remote side stopped reading; stdin is moot.
      NoteDone(Op::kWrite);
      stdin_eof_ = eof_sent_ = true;
      in_begin_ = in_end_ = 0;
      return true;
    } else {
      return ChannelError("writing stdin to the channel");
    }
  } else if (in_begin_ == in_end_ && !stdin_eof_ && Ready(stdio_.in, POLLIN)) {
    ssize_t n = ::read(stdio_.in, in_buf_.data(), in_buf_.size());
    if (n > 0) {
      in_begin_ = 0;
      in_end_ = static_cast<size_t>(n);
      progress = true;
    } else if (n == 0) {
      stdin_eof_ = true;
      progress = true;
    } else if (errno != EINTR && errno != EAGAIN) {
      LogDebug(std::string("ssh: reading stdin failed: ") +
               std::strerror(errno) + "; sending EOF");
      stdin_eof_ = true;
      progress = true;
    }
  }
  if (stdin_eof_ && in_begin_ == in_end_ && !eof_sent_ && Allowed(Op::kEof)) {
    int rc = libssh2_channel_send_eof(channel_.get());
    if (rc == LIBSSH2_ERROR_EAGAIN) {
      NoteEagain(Op::kEof);
    } else {
      NoteDone(Op::kEof);
      eof_sent_ = true;  // An error means the channel is closing anyway.
      progress = true;
    }
  }
  return progress;
}

// The fallback when the "signal" request is ignored. It was the only way
// with libssh2 1.10, which has no channel_signal, and whose only
// generic request call (channel_process_startup) refuses to run again on a
// channel that already ran exec ("Channel can not be reused"), so the
// RFC 4254 "signal" request cannot be sent at all. Instead a second exec
// channel on the same connection signals the command's process group:
// with OpenSSH every channel of a connection is a child of the same
// per-connection sshd, and it starts each no-pty session with setsid(), so
// that child's pid is its session and process group id. The helper finds
// that sshd as the parent of its own session leader, not as $PPID: with a
// ForceCommand (sh -c "$SSH_ORIGINAL_COMMAND") the script runs in a shell
// under the session's shell, and so does the command.
namespace {
std::string SignalScript(const std::string& name) {
  return "top=$PPID; sid=$$; read -r p c s pp g ss r < /proc/$$/stat && "
         "read -r p c s pp r < /proc/$ss/stat 2>/dev/null && "
         "{ sid=$ss; top=$pp; }; "
         "for f in /proc/[0-9]*/stat; do read -r p c s pp r < \"$f\" "
         "2>/dev/null || continue; if [ \"$pp\" = \"$top\" ] && "
         "[ \"$p\" != \"$sid\" ]; then kill -" +
         name +
         " -\"$p\" 2>/dev/null || "
         "kill -" +
         name + " \"$p\" 2>/dev/null; fi; done; exit 0";
}
}  // namespace

StatusOr<bool> ExecChannel::StepSignal(TimePoint now) {
  if (!signal_request_sent_) {
    int rc = libssh2_channel_signal_ex(channel_.get(), signal_.data(),
                                       signal_.size());
    if (rc == LIBSSH2_ERROR_EAGAIN) {
      NoteEagain(Op::kSignal);
      return false;
    }
    NoteDone(Op::kSignal);
    signal_request_sent_ = true;
    if (rc == 0) {
      LogInfo("ssh: forwarded SIG" + signal_ + " as an SSH signal request");
      fallback_at_ = now + kSignalRequestGrace;
      stdin_eof_ = true;  // As after the helper: drop pending stdin.
      in_begin_ = in_end_ = 0;
      return true;
    }
    LogInfo("ssh: the SSH signal request failed (" + LastError(session_) + ")");
  }
  if (now < fallback_at_) return false;  // The command may still end.
  if (!signal_channel_) {
    // Once, not on every EAGAIN of the channel open below.
    if (fallback_at_ != TimePoint::min() && !fallback_logged_) {
      fallback_logged_ = true;
      LogInfo("ssh: the command is still running " +
              FormatDuration(kSignalRequestGrace) +
              " after the signal request (the server ignored it?); "
              "forwarding SIG" +
              signal_ + " through a second channel");
    }
    LIBSSH2_CHANNEL* ch =
        libssh2_channel_open_ex(session_, "session", sizeof("session") - 1,
                                LIBSSH2_CHANNEL_WINDOW_DEFAULT,
                                LIBSSH2_CHANNEL_PACKET_DEFAULT, nullptr, 0);
    if (ch == nullptr) {
      if (libssh2_session_last_errno(session_) == LIBSSH2_ERROR_EAGAIN) {
        NoteEagain(Op::kSignal);
        return false;
      }
      // sshd refuses a second session when MaxSessions is 1 (and ignores
      // signal requests for root sessions). Said at -v.
      Undeliverable("the server refused a second session channel (" +
                        LastError(session_) + "; sshd's MaxSessions 1?)",
                    now);
      return true;
    }
    NoteDone(Op::kSignal);
    signal_channel_.reset(ch);
    return true;
  }
  std::string script = SignalScript(signal_);
  int rc = libssh2_channel_exec(signal_channel_.get(), script.c_str());
  if (rc == LIBSSH2_ERROR_EAGAIN) {
    NoteEagain(Op::kSignal);
    return false;
  }
  NoteDone(Op::kSignal);
  if (rc != 0) {
    Undeliverable("the server refused the exec on a second channel (" +
                      LastError(session_) + ")",
                  now);
    return true;
  }
  LogInfo("ssh: forwarded SIG" + signal_ +
          " to the command's process group through a second channel");
  SignalSent(now);
  return true;
}

void ExecChannel::Undeliverable(const std::string& why, TimePoint now) {
  // No route is left, so waiting out the grace changes nothing: drop the
  // session now, as ssh exits at once on SIGTERM. The teardown's
  // disconnect makes sshd close the command's pipes: a command that
  // writes gets SIGPIPE, one that reads gets EOF; one that does neither
  // keeps running, as after ssh (sshd sends SIGHUP only to a pty session).
  LogInfo("ssh: SIG" + signal_ +
          " could not be delivered to the remote command: " + why +
          "; dropping the session (sshd then closes the command's pipes)");
  undeliverable_ = true;
  SignalSent(now);
  grace_deadline_ = now;  // The next step gives up (GiveUp).
}

void ExecChannel::StopOnOutputError(int err, TimePoint now) {
  output_error_ = std::string("writing the command's output to stdout: ") +
                  std::strerror(err) +
                  (err == EPIPE ? " (its reader went away)" : "");
  LogDebug("ssh: " + output_error_ + "; closing the channel");
  // Nothing more to send but the close; the output is moot.
  stdin_eof_ = true;
  if (blocker_ != Op::kWrite) in_begin_ = in_end_ = 0;
  grace_deadline_ = std::min(grace_deadline_, now + kSignalGrace);
}

void ExecChannel::GiveUp() {
  // The command outlived the signal, the request never completed, or sshd
  // did not answer the close in time: stop waiting. libssh2_channel_close
  // would wait for the server's CLOSE, so the channel is left to the
  // session teardown (disconnect), which ends the command's session.
  forced_close_ = true;
  result_.exit_status = kFailureExit;
  if (!output_error_.empty()) {
    result_.local_error = output_error_;
  } else if (channel_ && libssh2_channel_eof(channel_.get())) {
    // The command ended (its output may still be waiting for a stalled
    // reader, or sshd's CLOSE for the link): report how, as sshd said.
    ReadExitInfo();
  } else {
    result_.signal = requested_signal_;
    result_.signal_message =
        undeliverable_ ? "the signal could not be delivered; connection dropped"
                       : "still running " + FormatDuration(kSignalGrace) +
                             " after the signal; connection dropped";
  }
  phase_ = Phase::kDone;
}

void ExecChannel::SignalSent(TimePoint now) {
  signal_sent_ = true;
  signal_.clear();
  stdin_eof_ = true;  // Drop pending stdin; EOF follows.
  in_begin_ = in_end_ = 0;
  grace_deadline_ = now + kSignalGrace;
}

void ExecChannel::ReadExitInfo() {
  char* sig = nullptr;
  size_t sig_len = 0;
  char* msg = nullptr;
  size_t msg_len = 0;
  libssh2_channel_get_exit_signal(channel_.get(), &sig, &sig_len, &msg,
                                  &msg_len, nullptr, nullptr);
  if (sig != nullptr) {
    result_.signal.assign(sig, sig_len);
    if (msg != nullptr) result_.signal_message.assign(msg, msg_len);
    result_.exit_status = kFailureExit;
  } else {
    result_.exit_status = libssh2_channel_get_exit_status(channel_.get());
  }
  if (sig != nullptr) libssh2_free(session_, sig);
  if (msg != nullptr) libssh2_free(session_, msg);
}

void ExecChannel::FinishExit() {
  if (!output_error_.empty()) {
    // The exit status (if sshd still sent one) is not what happened: the
    // agent cut the command off, and says so with 255 as ssh does.
    result_.exit_status = kFailureExit;
    result_.signal.clear();
    result_.local_error = output_error_;
  } else if (!forced_close_) {
    ReadExitInfo();
  }
  // local.close is set, so freeing sends nothing and cannot block.
  channel_.reset();
  phase_ = Phase::kDone;
}

}  // namespace k8s_agent::ssh
