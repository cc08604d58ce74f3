// SPDX-License-Identifier: Apache-2.0
// SshConnection over libssh2: TCP connect, handshake, host key policy,
// public-key auth (publickey_auth.h), keepalives, and the exec channel,
// all non-blocking.

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "plugin/base/log.h"
#include "plugin/base/strings.h"
#include "plugin/base/unique_fd.h"
#include "plugin/ssh/block_directions.h"
#include "plugin/ssh/exec_channel.h"
#include "plugin/ssh/handshake_diagnosis.h"
#include "plugin/ssh/kex_offer.h"
#include "plugin/ssh/known_hosts.h"
#include "plugin/ssh/libssh2_algorithms.h"
#include "plugin/ssh/libssh2_handles.h"
#include "plugin/ssh/pre_ident_lines.h"
#include "plugin/ssh/publickey_auth.h"
#include "plugin/ssh/socket_fate.h"
#include "plugin/ssh/ssh_client.h"
#include "plugin/ssh/tcp_connect.h"

namespace k8s_agent::ssh {
namespace {

// The destructor's bound on each blocking libssh2 call on the abnormal
// path (disconnect, channel free).
constexpr long kTeardownTimeoutMs = 250;
// Bytes of the server's banner and first KEXINIT kept to explain a failed
// negotiation (a KEXINIT is a few KiB at most).
constexpr size_t kKexCaptureLimit = 64 * 1024;

class Libssh2Connection : public SshConnection {
 public:
  Libssh2Connection(const ResolvedSshOptions& options, Clock* clock,
                    std::string ip, int port, std::string alias)
      : options_(options),
        clock_(clock),
        ip_(std::move(ip)),
        port_(port),
        alias_(std::move(alias)),
        where_("ssh " + options_.user + "@" + HostPort(ip_, port_)) {}

  ~Libssh2Connection() override;

  void Start(TimePoint now);

  State state() const override { return state_; }
  const Status& status() const override { return status_; }
  bool refused() const override { return refused_; }
  bool connect_failed() const override { return connect_failed_; }
  Status Exec(const std::string& command, StdioFds stdio) override;
  bool command_started() const override { return command_started_; }
  const ExitResult& exit_result() const override { return exit_result_; }
  void Signal(const std::string& name) override;

  void CollectFds(std::vector<pollfd>* fds) override;
  TimePoint NextWake() const override;
  void OnFdReady(int fd, short revents, TimePoint now) override;
  void OnTimer(TimePoint now) override;

 private:
  void Fail(Status status);
  void FinishConnect(TimePoint now);
  void StartHandshake(TimePoint now);
  Status PreferKnownHostKeyTypes();
  void Advance(TimePoint now);
  bool StepHandshake(TimePoint now);
  bool StepAuth(TimePoint now);
  void OnAuthenticated(TimePoint now);
  void KeepAlive(TimePoint now);
  Duration KeepaliveTick() const;
  Duration SilenceLimit() const;
  const char* PhaseName() const;
  // libssh2's socket reads go through here, so any byte from the server
  // (data, window adjust, a keepalive reply consumed inside a libssh2 call)
  // proves the peer alive; poll() alone misses replies that a timer-driven
  // call reads at once.
  static ssize_t RecvHook(libssh2_socket_t fd, void* buffer, size_t length,
                          int flags, void** abstract);
  static ssize_t SendHook(libssh2_socket_t fd, const void* buffer,
                          size_t length, int flags, void** abstract);
  // Keeps the server's SSH_MSG_DISCONNECT: libssh2 reports it only as the
  // failure of whatever call was reading ("Waiting for USERAUTH response").
  static void DisconnectHook(LIBSSH2_SESSION* session, int reason,
                             const char* message, int message_len,
                             const char* language, int language_len,
                             void** abstract);

  ResolvedSshOptions options_;
  Clock* clock_;
  std::string ip_;
  int port_;
  std::string alias_;
  std::string where_;  // "ssh user@ip:port" ([ip] for IPv6), every error's.

  State state_ = State::kConnecting;
  Status status_;
  bool refused_ = false;         // connect() got ECONNREFUSED.
  bool connect_failed_ = false;  // Failed before TCP was up.
  TimePoint attempt_deadline_ = TimePoint::max();
  UniqueFd sock_;
  SessionPtr session_;
  bool handshake_done_ = false;
  std::string kex_received_;  // What the server sent until the handshake.
  short wait_events_ = 0;     // What the last EAGAIN waits for.
  SocketFate fate_;           // Resets and closes that libssh2 hides.
  std::optional<ServerDisconnect> disconnect_;  // What the server said.
  PreIdentLines pre_ident_;  // Lines before the server's "SSH-2.0-".

  PublicKeyAuth auth_{&options_, &ip_, port_, &fate_, &disconnect_};

  // Keepalive: dead peer = no inbound byte for SilenceLimit() while we
  // were waiting for the server.
  TimePoint next_keepalive_ = TimePoint::max();
  TimePoint last_inbound_;
  bool reading_socket_ = false;
  // Until the command runs, every segment from the server is ACKed at once
  // (TCP_QUICKACK after each read). sshd leaves Nagle on until the session
  // starts (it sets TCP_NODELAY then) and writes some replies as two
  // segments, e.g. the hostkeys-00 notice and then the channel-open
  // confirmation: the second waits for the ACK of the first, which Linux
  // delays by up to 40 ms when the agent has nothing to send. On the bed
  // nearly every launch paid it once, and ssh up to three times. Once the
  // command runs sshd has TCP_NODELAY and the extra syscall per read would only
  // cost throughput.
  bool command_started_ = false;

  std::unique_ptr<ExecChannel> exec_;
  ExitResult exit_result_;
};

Libssh2Connection::~Libssh2Connection() {
  if (!session_) return;
  // Abnormal path (the normal one has freed the channel already): bounded
  // blocking calls, then cut the socket so nothing else can wait.
  libssh2_session_set_blocking(session_.get(), 1);
  libssh2_session_set_timeout(session_.get(), kTeardownTimeoutMs);
  if (handshake_done_ && state_ != State::kFailed) {
    // Tells sshd to end the session now (and with it the command's pipes).
    libssh2_session_disconnect(session_.get(), "k8s-agent: done");
  }
  if (sock_.valid()) ::shutdown(sock_.get(), SHUT_RDWR);
  exec_.reset();
  session_.reset();
}

void Libssh2Connection::Fail(Status status) {
  if (state_ == State::kFailed || state_ == State::kExited) return;
  // A reset or close before any key was refused is a transport failure at
  // this stage, whatever libssh2 called it ("Failed getting banner").
  // The server's own disconnect during auth says more than the close.
  bool said_why = disconnect_ && state_ == State::kAuthenticating;
  if (fate_.lost() && auth_.rejected() == 0 && !said_why &&
      (state_ == State::kHandshaking || state_ == State::kAuthenticating)) {
    // Closed once the keys are agreed, before any answer to auth: not
    // sshd's MaxStartups (it closes at accept, before its banner) but the
    // connection's own sshd process ending, or something in between.
    bool after_kex =
        state_ == State::kHandshaking && ServerSentNewkeys(kex_received_);
    std::string stage = after_kex
                            ? "after the key exchange, before authentication"
                            : std::string("during ") + PhaseName();
    status = UnavailableError(
        fate_.Describe(ip_, port_) + " " + stage +
        " (libssh2: " + status.message() + ")" +
        (after_kex ? "; the connection's sshd process ended or something "
                     "between cut it (a proxy, the container restarting): "
                     "sshd's log on the pod says why"
                   : ""));
  }
  connect_failed_ = state_ == State::kConnecting;
  state_ = State::kFailed;
  status_ = status.WithContext(where_);
  exec_.reset();  // Its channel dies with the session.
}

const char* Libssh2Connection::PhaseName() const {
  switch (state_) {
    case State::kConnecting:
      return "TCP connect";
    case State::kHandshaking:
      return "SSH handshake";
    case State::kAuthenticating:
      return "authentication";
    default:
      return "session";
  }
}

void Libssh2Connection::Start(TimePoint now) {
  attempt_deadline_ = now + options_.connect_timeout;
  if (EnsureLibssh2Init() != 0) {
    Fail(InternalError("libssh2_init failed"));
    return;
  }
  StatusOr<TcpAttempt> tcp = StartTcpConnect(ip_, port_, options_.bind_address);
  if (!tcp.ok()) {
    Fail(tcp.status());
    return;
  }
  sock_ = std::move(tcp->fd);
  if (tcp->error == 0) {
    StartHandshake(now);
  } else if (tcp->error == EINPROGRESS) {
    state_ = State::kConnecting;
  } else {
    refused_ = tcp->error == ECONNREFUSED;
    Fail(ErrnoError("connect", tcp->error));
  }
}

void Libssh2Connection::FinishConnect(TimePoint now) {
  int err = TcpConnectError(sock_.get());
  if (err == EINPROGRESS || err == EALREADY) return;
  if (err != 0) {
    refused_ = err == ECONNREFUSED;
    Fail(ErrnoError("connect", err));
    return;
  }
  StartHandshake(now);
}

void Libssh2Connection::StartHandshake(TimePoint now) {
  session_.reset(libssh2_session_init_ex(nullptr, nullptr, nullptr, this));
  if (!session_) {
    Fail(InternalError("libssh2_session_init failed"));
    return;
  }
  libssh2_session_callback_set2(
      session_.get(), LIBSSH2_CALLBACK_RECV,
      reinterpret_cast<libssh2_cb_generic*>(&RecvHook));
  libssh2_session_callback_set2(
      session_.get(), LIBSSH2_CALLBACK_SEND,
      reinterpret_cast<libssh2_cb_generic*>(&SendHook));
  libssh2_session_callback_set2(
      session_.get(), LIBSSH2_CALLBACK_DISCONNECT,
      reinterpret_cast<libssh2_cb_generic*>(&DisconnectHook));
  libssh2_session_set_blocking(session_.get(), 0);
  Status prefs = ApplyAlgorithmPrefs(session_.get(), options_.algorithms);
  if (prefs.ok()) prefs = PreferKnownHostKeyTypes();
  if (!prefs.ok()) {
    Fail(prefs);
    return;
  }
  state_ = State::kHandshaking;
  Advance(now);
}

// libssh2 prefers ECDSA host keys; when known_hosts holds another type for
// this host, ask for that one first, as ssh does, so a known host is not
// reported as unknown just because it has several keys.
Status Libssh2Connection::PreferKnownHostKeyTypes() {
  std::vector<std::string> names = {KnownHostsName(alias_, port_)};
  if (ip_ != alias_) names.push_back(KnownHostsName(ip_, port_));
  return ApplyHostKeyPrefs(session_.get(), options_.algorithms.host_keys,
                           KnownKeyTypes(options_.known_hosts_files, names));
}

void Libssh2Connection::Advance(TimePoint now) {
  if (state_ == State::kHandshaking && !StepHandshake(now)) return;
  if (state_ == State::kAuthenticating && !StepAuth(now)) return;
  if (state_ == State::kRunning && exec_) {
    Status s = exec_->Pump(now);
    // Before the error check: the command may have been accepted and then
    // failed within one Pump.
    if (exec_->started()) command_started_ = true;
    if (!s.ok()) {
      Fail(s);
      return;
    }
    if (exec_->done()) {
      exit_result_ = exec_->result();
      exec_.reset();
      state_ = State::kExited;
    }
  }
}

// Returns true when the handshake finished and the host key is accepted.
bool Libssh2Connection::StepHandshake(TimePoint now) {
  int rc = libssh2_session_handshake(session_.get(), sock_.get());
  if (rc == LIBSSH2_ERROR_EAGAIN) {
    wait_events_ =
        DirectionsToEvents(libssh2_session_block_directions(session_.get()));
    return false;
  }
  if (rc != 0) {
    Fail(!pre_ident_.status().ok()
             ? pre_ident_.status()
             : HandshakeError(session_.get(), sock_.get(), rc, kex_received_,
                              options_.algorithms));
    return false;
  }
  handshake_done_ = true;
  std::string().swap(kex_received_);
  size_t key_len = 0;
  int key_type = 0;
  const char* key =
      libssh2_session_hostkey(session_.get(), &key_len, &key_type);
  const char* hash =
      libssh2_hostkey_hash(session_.get(), LIBSSH2_HOSTKEY_HASH_SHA256);
  if (key == nullptr || key_len == 0 || hash == nullptr) {
    Fail(InternalError("the server sent no host key"));
    return false;
  }
  Status s = VerifyHostKey(session_.get(), options_.strict_host_key_checking,
                           options_.known_hosts_files, alias_, ip_, port_,
                           std::string_view(key, key_len),
                           Sha256Fingerprint(std::string_view(hash, 32)));
  if (!s.ok()) {
    Fail(s);
    return false;
  }
  state_ = State::kAuthenticating;
  (void)now;
  return true;
}

// Returns true once authenticated.
bool Libssh2Connection::StepAuth(TimePoint now) {
  StatusOr<bool> done = auth_.Step(session_.get(), &wait_events_);
  if (!done.ok()) {
    Fail(done.status());
    return false;
  }
  if (!*done) return false;
  OnAuthenticated(now);
  return true;
}

void Libssh2Connection::OnAuthenticated(TimePoint now) {
  state_ = State::kReady;
  attempt_deadline_ = TimePoint::max();
  last_inbound_ = now;
  if (options_.server_alive_interval_s > 0) {
    libssh2_keepalive_config(
        session_.get(), 1,
        static_cast<unsigned>(options_.server_alive_interval_s));
    next_keepalive_ = now + KeepaliveTick();
  }
}

Status Libssh2Connection::Exec(const std::string& command, StdioFds stdio) {
  if (state_ != State::kReady) {
    return FailedPreconditionError("Exec: the connection is not ready");
  }
  exec_ = std::make_unique<ExecChannel>(session_.get(), command, stdio,
                                        options_.no_stdin);
  // OpenSSH refuses the "signal" request in sessions without privilege
  // separation, which is every root login ("session signalling requires
  // privilege separation").
  const char* banner = libssh2_session_banner_get(session_.get());
  if (options_.user == "root" && banner != nullptr &&
      std::string_view(banner).find("OpenSSH") != std::string_view::npos) {
    exec_->SkipSignalRequest();
  }
  state_ = State::kRunning;
  Advance(clock_->Now());  // Sends the channel open; later steps are fd-driven.
  return OkStatus();
}

void Libssh2Connection::Signal(const std::string& name) {
  if (state_ == State::kRunning && exec_) {
    exec_->RequestSignal(name, clock_->Now());
    Advance(clock_->Now());
  }
}

void Libssh2Connection::CollectFds(std::vector<pollfd>* fds) {
  short events = 0;
  switch (state_) {
    case State::kConnecting:
      events = POLLOUT;
      break;
    case State::kHandshaking:
    case State::kAuthenticating:
      events = wait_events_ != 0 ? wait_events_ : POLLIN;
      break;
    case State::kRunning:
      if (exec_) {
        events = exec_->SocketEvents();
        exec_->CollectStdioFds(fds);
      }
      break;
    default:
      // kReady: nothing to read until Exec (replies to keepalives wait in
      // the socket buffer). kExited/kFailed: done.
      break;
  }
  reading_socket_ = (events & POLLIN) != 0;
  // An fd with no events still reports POLLHUP/POLLERR, which would spin.
  if (events != 0) fds->push_back({sock_.get(), events, 0});
}

TimePoint Libssh2Connection::NextWake() const {
  switch (state_) {
    case State::kConnecting:
    case State::kHandshaking:
    case State::kAuthenticating:
      return attempt_deadline_;
    case State::kReady:
    case State::kRunning: {
      TimePoint t = exec_ ? exec_->NextWake() : TimePoint::max();
      if (options_.server_alive_interval_s > 0) {
        t = std::min(t, next_keepalive_);
        if (options_.server_alive_count_max > 0 && reading_socket_) {
          t = std::min(t, last_inbound_ + SilenceLimit());
        }
      }
      return t;
    }
    default:
      return TimePoint::max();
  }
}

void Libssh2Connection::OnFdReady(int fd, short revents, TimePoint now) {
  if (fd == sock_.get() && (revents & POLLIN)) last_inbound_ = now;
  if (state_ == State::kConnecting) {
    if (fd == sock_.get()) FinishConnect(now);
    return;
  }
  Advance(now);
}

void Libssh2Connection::OnTimer(TimePoint now) {
  switch (state_) {
    case State::kConnecting:
    case State::kHandshaking:
    case State::kAuthenticating:
      if (now >= attempt_deadline_) {
        Fail(UnavailableError("timed out after " +
                              FormatDuration(options_.connect_timeout) +
                              " during " + PhaseName() + " (ConnectTimeout)"));
      }
      return;
    case State::kReady:
    case State::kRunning:
      KeepAlive(now);
      if (state_ == State::kRunning) Advance(now);
      return;
    default:
      return;
  }
}

ssize_t Libssh2Connection::RecvHook(libssh2_socket_t fd, void* buffer,
                                    size_t length, int flags, void** abstract) {
  ssize_t n = ::recv(fd, buffer, length, flags);
  int err = n < 0 ? errno : 0;
  auto* self = static_cast<Libssh2Connection*>(*abstract);
  self->fate_.OnRecv(n, err);
  if (n < 0) return -err;  // libssh2's own convention (EAGAIN included).
  if (n > 0 && !self->pre_ident_.ident_seen() &&
      !self->pre_ident_
           .Feed({static_cast<const char*>(buffer), static_cast<size_t>(n)})
           .ok()) {
    // libssh2 would read such lines forever: a read error ends its
    // handshake call, and StepHandshake reports pre_ident_'s reason.
    return -EPROTO;
  }
  if (n > 0) {
    self->last_inbound_ = self->clock_->Now();
    if (!self->command_started_) {  // Quick ACKs: see command_started_.
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
    }
    if (!self->handshake_done_ &&
        self->kex_received_.size() < kKexCaptureLimit) {
      self->kex_received_.append(static_cast<const char*>(buffer),
                                 static_cast<size_t>(n));
    }
  }
  return n;
}

ssize_t Libssh2Connection::SendHook(libssh2_socket_t fd, const void* buffer,
                                    size_t length, int flags, void** abstract) {
  // MSG_NOSIGNAL: a peer that reset must not kill the agent with SIGPIPE.
  ssize_t n = ::send(fd, buffer, length, flags | MSG_NOSIGNAL);
  int err = n < 0 ? errno : 0;
  static_cast<Libssh2Connection*>(*abstract)->fate_.OnSend(n, err);
  return n < 0 ? -err : n;
}

void Libssh2Connection::DisconnectHook(LIBSSH2_SESSION* /*session*/, int reason,
                                       const char* message, int message_len,
                                       const char* /*language*/,
                                       int /*language_len*/, void** abstract) {
  auto* self = static_cast<Libssh2Connection*>(*abstract);
  // No exception may cross libssh2's frames (bad_alloc, in theory).
  try {
    ServerDisconnect d;
    d.reason = reason;
    if (message != nullptr && message_len > 0) {
      d.message.assign(message, static_cast<size_t>(message_len));
    }
    self->disconnect_ = std::move(d);
  } catch (...) {
  }
}

// ServerAliveCountMax keepalives may go unanswered, as in ssh. libssh2
// (1.10 and the 1.11.1 we build) sends at most every 2 s (an interval of 1
// becomes 2), so that is the tick; a healthy but quiet peer answers once per
// tick. Allowing count + 1 silent ticks detects a dead peer between count and
// count + 1 intervals after it died (ssh: about count intervals), never a live
// one.
Duration Libssh2Connection::KeepaliveTick() const {
  return std::chrono::seconds(std::max(2, options_.server_alive_interval_s));
}

Duration Libssh2Connection::SilenceLimit() const {
  return KeepaliveTick() * (options_.server_alive_count_max + 1);
}

void Libssh2Connection::KeepAlive(TimePoint now) {
  int interval = options_.server_alive_interval_s;
  if (interval <= 0) return;
  // Silence only counts while we were actually waiting for the server; a
  // stalled stdout reader is our own doing.
  if (!reading_socket_) last_inbound_ = now;
  int count = options_.server_alive_count_max;
  if (count > 0 && reading_socket_ && now - last_inbound_ >= SilenceLimit()) {
    Fail(UnavailableError("no answer from " + alias_ + " for " +
                          FormatDuration(now - last_inbound_) + " (" +
                          std::to_string(count) +
                          " keepalives unanswered; ServerAliveInterval " +
                          std::to_string(interval) + " x ServerAliveCountMax " +
                          std::to_string(count) + ")"));
    return;
  }
  if (now < next_keepalive_) return;
  next_keepalive_ = now + KeepaliveTick();
  // Only with room in the socket: a keepalive that half-sends would block
  // every other libssh2 send (BAD_USE), and a full buffer already shows the
  // link is busy.
  pollfd p{sock_.get(), POLLOUT, 0};
  if (::poll(&p, 1, 0) != 1 || !(p.revents & POLLOUT)) return;
  if (libssh2_session_block_directions(session_.get()) &
      LIBSSH2_SESSION_BLOCK_OUTBOUND) {
    return;
  }
  int seconds_to_next = 0;
  libssh2_keepalive_send(session_.get(), &seconds_to_next);
}

class Libssh2Connector : public SshConnector {
 public:
  explicit Libssh2Connector(Clock* clock) : clock_(clock) {}

  std::unique_ptr<SshConnection> Connect(const ResolvedSshOptions& options,
                                         const std::string& ip,
                                         TimePoint now) override {
    auto c = std::make_unique<Libssh2Connection>(
        options, clock_, ip, options.port, options.host_key_alias);
    c->Start(now);
    return c;
  }

 private:
  Clock* clock_;
};

}  // namespace

std::unique_ptr<SshConnector> NewLibssh2Connector(Clock* clock) {
  return std::make_unique<Libssh2Connector>(clock);
}

}  // namespace k8s_agent::ssh
