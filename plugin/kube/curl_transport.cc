// SPDX-License-Identifier: Apache-2.0
// CurlTransport: curl_multi_socket_action driven by the EventLoop.

#include "plugin/kube/curl_transport.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "plugin/base/log.h"
#include "plugin/base/strings.h"
#include "plugin/kube/client_key_pair.h"
#include "plugin/kube/curl_errors.h"
#include "plugin/kube/curl_options.h"
#include "plugin/kube/curl_transfer.h"
#include "plugin/kube/read_idle_ping.h"
#include "plugin/kube/stream_liveness.h"

namespace k8s_agent::kube {
namespace {

// TCP keepalive finds a dead peer on an idle watch long before the idle
// timer, and keeps NAT/conntrack entries alive.
constexpr long kKeepIdleSeconds = 30;
constexpr long kKeepIntervalSeconds = 10;

std::once_flag g_curl_init;

}  // namespace

class CurlTransport::Call : public HttpCall {
 public:
  Call(CurlTransport* transport, uint64_t id)
      : transport_(transport), id_(id) {}
  ~Call() override { transport_->Cancel(id_); }

 private:
  CurlTransport* transport_;
  uint64_t id_;
};

CurlTransport::CurlTransport(const ClusterConfig& config, Clock* clock)
    : config_(config), clock_(clock) {}

StatusOr<std::unique_ptr<CurlTransport>> CurlTransport::Create(
    const ClusterConfig& config, Clock* clock) {
  std::unique_ptr<CurlTransport> transport(new CurlTransport(config, clock));
  K8S_RETURN_IF_ERROR(transport->Init());
  return transport;
}

Status CurlTransport::Init() {
  std::call_once(g_curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  const curl_version_info_data* info = curl_version_info(CURLVERSION_NOW);
  if (info == nullptr || (info->features & CURL_VERSION_SSL) == 0) {
    return FailedPreconditionError("libcurl was built without TLS support");
  }
  if (!StartsWith(config_.server, "https://")) {
    return InvalidArgumentError("API server must be https://: " +
                                Printable(config_.server));
  }
  // Fail at startup, naming the file, rather than on the first request.
  for (const std::string* file : {&config_.ca_file, &config_.client_cert_file,
                                  &config_.client_key_file}) {
    if (file->empty()) continue;
    auto text = ReadFileToString(*file, 1 << 20);
    if (!text.ok()) {
      return FailedPreconditionError(text.status().message() +
                                     " (check --certificate-authority / the "
                                     "kubeconfig)");
    }
  }
  // Before any handshake: a certificate with the wrong key would otherwise
  // surface as curl's "unable to set private key file" or a handshake
  // failure, read as a server verification problem.
  K8S_RETURN_IF_ERROR(CheckConfiguredKeyPair(config_));
  credentials_ = NewCredentialSource(config_);
  // A token file or literal is checked now; an exec plugin starts now and
  // fails now only when it cannot start at all (not installed).
  K8S_RETURN_IF_ERROR(credentials_->Get(clock_->Now()).status());
  // An insecure-skip-tls-verify config was warned about once, by
  // LoadClusterConfig, where it was read.
  share_.reset(curl_share_init());
  pinger_.reset(curl_easy_init());
  multi_.reset(curl_multi_init());
  if (!share_ || !pinger_ || !multi_) {
    return InternalError(
        "curl_share_init/curl_easy_init/curl_multi_init failed");
  }
  curl_share_setopt(share_.get(), CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
  curl_easy_setopt(pinger_.get(), CURLOPT_SHARE, share_.get());
  // Every upkeep call pings every HTTP/2 connection (the callers decide
  // when one is due); other protocols ignore it.
  curl_easy_setopt(pinger_.get(), CURLOPT_UPKEEP_INTERVAL_MS, 1L);
  curl_multi_setopt(multi_.get(), CURLMOPT_SOCKETFUNCTION, &OnSocket);
  curl_multi_setopt(multi_.get(), CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(multi_.get(), CURLMOPT_TIMERFUNCTION, &OnTimerSet);
  curl_multi_setopt(multi_.get(), CURLMOPT_TIMERDATA, this);
  return OkStatus();
}

CurlTransport::~CurlTransport() {
  // Order from curl_multi_cleanup(3): remove, easy cleanup, multi cleanup.
  for (auto& [id, t] : transfers_) {
    if (t->in_multi) curl_multi_remove_handle(multi_.get(), t->easy.get());
  }
  transfers_.clear();
  pinger_.reset();
  multi_.reset();
  share_.reset();  // Closes the pooled connections.
}

void CurlTransport::InvalidateToken() { credentials_->Invalidate(); }

void CurlTransport::set_request_stall(Duration stall) {
  auto s = std::chrono::ceil<std::chrono::seconds>(stall).count();
  stall_s_ = std::max<long>(kRequestStallSeconds, static_cast<long>(s));
}

// What every request shares: our callbacks and the connection pool,
// TCP behaviour, the stall rule, https only.
void CurlTransport::SetTransferOptions(Transfer* t, bool streaming) {
  CURL* e = t->easy.get();
  curl_easy_setopt(e, CURLOPT_PRIVATE, t);
  curl_easy_setopt(e, CURLOPT_SHARE, share_.get());
  curl_easy_setopt(e, CURLOPT_SOCKOPTFUNCTION, &OnSocketOpened);
  curl_easy_setopt(e, CURLOPT_SOCKOPTDATA, t);
  curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, &OnSocketClosed);
  curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, this);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->errbuf);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, kKeepIdleSeconds);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, kKeepIntervalSeconds);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, long{kConnectTimeoutMs});
  // A watch lasts minutes by design; only our idle timer bounds it. Other
  // requests fail only when stalled (below 1 byte/s for the whole window).
  if (!streaming) {
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, stall_s_);
  }
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https");
#else
  curl_easy_setopt(e, CURLOPT_PROTOCOLS, long{CURLPROTO_HTTPS});
#endif
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &OnWrite);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, t);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, t);
}

Status CurlTransport::Configure(Transfer* t, const HttpRequest& request,
                                const Credential& credential) {
  CURL* e = t->easy.get();
  t->description = request.method + " " + config_.server + request.path;
  std::vector<std::string> headers = request.headers;
  K8S_RETURN_IF_ERROR(
      ApplyRouteOptions(e, config_, request.path, &t->connect_to, &headers));
  SetTransferOptions(t, request.streaming);
  K8S_RETURN_IF_ERROR(ApplyTlsOptions(e, config_, credential));

  if (request.method != "GET") {
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  if (!request.body.empty()) {
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE,
                     static_cast<long>(request.body.size()));
    curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, request.body.c_str());
  }

  curl_slist* list = nullptr;
  auto add = [&list](const std::string& header) {
    curl_slist* next = curl_slist_append(list, header.c_str());
    if (next != nullptr) list = next;
    return next != nullptr;
  };
  bool ok = true;
  for (const std::string& h : headers) ok = ok && add(h);
  if (!credential.token.empty()) {
    ok = ok && add("Authorization: Bearer " + credential.token);
  }
  ok = ok && add("Expect:");
  t->headers.reset(list);
  if (!ok) return InternalError("out of memory building request headers");
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, list);
  return OkStatus();
}

std::unique_ptr<HttpCall> CurlTransport::Start(const HttpRequest& request,
                                               HttpSink* sink) {
  auto t = std::make_unique<Transfer>();
  t->owner = this;
  t->id = next_id_++;
  t->sink = sink;
  t->streaming = request.streaming;
  if (request.streaming) {
    t->liveness =
        StreamLiveness(milliseconds(request.idle_timeout_ms),
                       milliseconds(request.ping_after_ms),
                       milliseconds(request.ping_timeout_ms), clock_->Now());
  }
  t->easy.reset(curl_easy_init());
  Transfer* raw = t.get();
  uint64_t id = t->id;
  transfers_.emplace(id, std::move(t));
  bool queued = false;
  for (const auto& [other, transfer] : transfers_) {
    queued = queued || transfer->awaiting.has_value();
  }
  if (!raw->easy) {
    FailEarly(raw, InternalError("curl_easy_init failed"));
  } else if (queued) {
    raw->awaiting = request;  // Behind the others, for the same credential.
  } else {
    Launch(raw, request, clock_->Now());
  }
  return std::make_unique<Call>(this, id);
}

StatusOr<bool> CurlTransport::CredentialReady(TimePoint now) {
  K8S_ASSIGN_OR_RETURN(MaybeCredential credential, credentials_->Get(now));
  return credential.has_value();
}

void CurlTransport::Launch(Transfer* t, const HttpRequest& request,
                           TimePoint now) {
  StatusOr<MaybeCredential> credential = credentials_->Get(now);
  if (!credential.ok()) return FailEarly(t, credential.status());
  if (!credential->has_value()) {
    t->awaiting = request;
    return;
  }
  Status status = Configure(t, request, **credential);
  if (status.ok() &&
      curl_multi_add_handle(multi_.get(), t->easy.get()) != CURLM_OK) {
    status = InternalError("curl_multi_add_handle failed");
  }
  if (!status.ok()) return FailEarly(t, status);
  t->in_multi = true;  // curl asks for a 0 ms timer: OnTimer starts it.
}

void CurlTransport::FailEarly(Transfer* t, Status why) {
  // Reported through the sink like any other failure, from the loop.
  t->finished = true;
  t->result = std::move(why);
  needs_delivery_ = true;
}

void CurlTransport::ResumeAwaiting(TimePoint now) {
  std::vector<uint64_t> ids;
  for (const auto& [id, t] : transfers_) {
    if (t->awaiting) ids.push_back(id);
  }
  if (ids.empty()) return;
  StatusOr<MaybeCredential> credential = credentials_->Get(now);
  if (credential.ok() && !credential->has_value()) return;
  for (uint64_t id : ids) {
    Transfer* t = transfers_.at(id).get();
    HttpRequest request = std::move(*t->awaiting);
    t->awaiting.reset();
    if (!credential.ok()) {
      FailEarly(t, credential.status());
    } else {
      Launch(t, request, now);
    }
  }
}

void CurlTransport::Cancel(uint64_t id) {
  auto it = transfers_.find(id);
  if (it == transfers_.end()) return;
  Transfer* t = it->second.get();
  // Never inside a curl callback: sinks only run from Deliver().
  if (t->in_multi) {
    curl_multi_remove_handle(multi_.get(), t->easy.get());
    t->in_multi = false;
  }
  t->sink = nullptr;
  if (delivering_ == id) {
    t->cancelled = true;  // Deliver() erases it when the sink returns.
  } else {
    transfers_.erase(it);
  }
}

int CurlTransport::OnSocket(CURL*, curl_socket_t fd, int what, void* self,
                            void*) {
  auto* transport = static_cast<CurlTransport*>(self);
  try {
    if (what == CURL_POLL_REMOVE) {
      transport->sockets_.erase(fd);
    } else {
      short events = 0;
      if (what & CURL_POLL_IN) events |= POLLIN;
      if (what & CURL_POLL_OUT) events |= POLLOUT;
      transport->sockets_[fd] = events;
    }
  } catch (...) {  // No exception may cross into libcurl.
    return -1;
  }
  return 0;
}

int CurlTransport::OnTimerSet(CURLM*, long timeout_ms, void* self) {
  auto* transport = static_cast<CurlTransport*>(self);
  transport->timer_at_ =
      timeout_ms < 0 ? TimePoint::max()
                     : transport->clock_->Now() + milliseconds(timeout_ms);
  return 0;
}

size_t CurlTransport::OnWrite(char* data, size_t size, size_t n, void* p) {
  auto* t = static_cast<Transfer*>(p);
  try {
    t->body.append(data, size * n);
  } catch (...) {
    return 0;  // Aborts the transfer: CURLE_WRITE_ERROR.
  }
  t->liveness.Heard(t->owner->clock_->Now());
  return size * n;
}

size_t CurlTransport::OnHeader(char* data, size_t size, size_t n, void* p) {
  auto* t = static_cast<Transfer*>(p);
  std::string_view line(data, size * n);
  t->liveness.Heard(t->owner->clock_->Now());
  try {
    if (StartsWith(line, "HTTP/")) {
      // A new status line (after 100 Continue): start over.
      t->response_headers.clear();
      t->headers_complete = false;
    } else if (Trim(line).empty()) {
      long code = 0;
      curl_easy_getinfo(t->easy.get(), CURLINFO_RESPONSE_CODE, &code);
      if (code >= 200) {
        t->http_status = static_cast<int>(code);
        t->headers_complete = true;
      }
    } else if (auto colon = line.find(':'); colon != std::string_view::npos) {
      t->response_headers[ToLower(Trim(line.substr(0, colon)))] =
          std::string(Trim(line.substr(colon + 1)));
    }
  } catch (...) {
    return 0;
  }
  return size * n;
}

void CurlTransport::CollectFds(std::vector<pollfd>* fds) {
  for (const auto& [fd, events] : sockets_) {
    fds->push_back(pollfd{fd, events, 0});
  }
  size_t first = fds->size();
  credentials_->CollectFds(fds);
  token_fds_.clear();
  for (size_t i = first; i < fds->size(); ++i) {
    token_fds_.push_back((*fds)[i].fd);
  }
}

TimePoint CurlTransport::NextWake() const {
  if (needs_delivery_) return TimePoint();  // Due now; min() would overflow.
  TimePoint wake = std::min(timer_at_, credentials_->NextWake());
  for (const auto& [id, t] : transfers_) {
    if (t->in_multi) {
      wake = std::min(wake, t->liveness.NextCheck(t->headers_complete));
    }
  }
  return wake;
}

void CurlTransport::OnFdReady(int fd, short revents, TimePoint now) {
  if (std::find(token_fds_.begin(), token_fds_.end(), fd) != token_fds_.end()) {
    credentials_->OnFdReady(fd, revents, now);
    ResumeAwaiting(now);
    Deliver();
    return;
  }
  if (sockets_.find(fd) == sockets_.end()) return;  // Closed meanwhile.
  int mask = 0;
  if (revents & (POLLIN | POLLHUP)) mask |= CURL_CSELECT_IN;
  if (revents & POLLOUT) mask |= CURL_CSELECT_OUT;
  if (revents & (POLLERR | POLLNVAL)) mask |= CURL_CSELECT_ERR;
  SocketAction(fd, mask);
  Deliver();
}

void CurlTransport::OnTimer(TimePoint now) {
  if (credentials_->NextWake() <= now) credentials_->OnTimer(now);
  ResumeAwaiting(now);
  if (timer_at_ <= now) {
    timer_at_ = TimePoint::max();
    SocketAction(CURL_SOCKET_TIMEOUT, 0);
  }
  CheckLiveness(now);
  Deliver();
}

void CurlTransport::SocketAction(int fd, int mask) {
  int running = 0;
  curl_multi_socket_action(multi_.get(), fd, mask, &running);
  ReadCompletions();
}

void CurlTransport::ReadCompletions() {
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi_.get(), &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    Transfer* t = nullptr;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &t);
    CURLcode code = msg->data.result;
    if (t == nullptr) continue;
    long connects = 0;
    curl_easy_getinfo(t->easy.get(), CURLINFO_NUM_CONNECTS, &connects);
    connections_opened_ += connects;
    // Removing here is safe: we are outside every curl callback. `msg`
    // is invalid afterwards, so it was read first.
    curl_multi_remove_handle(multi_.get(), t->easy.get());
    t->in_multi = false;
    t->finished = true;
    t->result = OkStatus();
    if (code != CURLE_OK) {
      CurlFailure failure;
      failure.code = code;
      failure.description = t->description;
      failure.error_buffer = t->errbuf;
      long used_proxy = 0;
      curl_easy_getinfo(t->easy.get(), CURLINFO_USED_PROXY, &used_proxy);
      failure.used_proxy = used_proxy != 0;
      if (failure.used_proxy) {
        curl_easy_getinfo(t->easy.get(), CURLINFO_HTTP_CONNECTCODE,
                          &failure.proxy_connect_code);
      }
      t->result = MapCurlError(failure, config_);
    }
    needs_delivery_ = true;
  }
}

// The socket of the transfer's connection when that is HTTP/2, else -1
// (no PING to send: bookmarks and the idle limit remain).
// CURLINFO_ACTIVESOCKET is only set once a transfer is done, so the socket
// is found by connection id (CURLINFO_CONN_ID, curl 8.2).
int CurlTransport::Http2Socket(const Transfer& t) const {
  long version = 0;
  curl_easy_getinfo(t.easy.get(), CURLINFO_HTTP_VERSION, &version);
  if (version != CURL_HTTP_VERSION_2_0) return -1;
#if LIBCURL_VERSION_NUM >= 0x080200
  curl_off_t conn = -1;
  curl_easy_getinfo(t.easy.get(), CURLINFO_CONN_ID, &conn);
  return connection_sockets_.SocketOf(conn);
#else
  return -1;
#endif
}

int CurlTransport::OnSocketOpened(void* transfer, curl_socket_t fd,
                                  curlsocktype purpose) {
#if LIBCURL_VERSION_NUM >= 0x080200
  auto* t = static_cast<Transfer*>(transfer);
  curl_off_t conn = -1;
  if (purpose == CURLSOCKTYPE_IPCXN &&
      curl_easy_getinfo(t->easy.get(), CURLINFO_CONN_ID, &conn) == CURLE_OK &&
      conn >= 0) {
    try {
      t->owner->connection_sockets_.Opened(conn, fd);
    } catch (...) {  // No exception may cross into libcurl; no PINGs then.
    }
  }
#endif
  return CURL_SOCKOPT_OK;
}

int CurlTransport::OnSocketClosed(void* self, curl_socket_t fd) {
  static_cast<CurlTransport*>(self)->connection_sockets_.Closed(fd);
  return close(fd);
}

void CurlTransport::CheckLiveness(TimePoint now) {
  std::vector<std::pair<Transfer*, ReadIdlePing::Reads>> pinging;
  std::set<int> ping_sockets;
  for (auto& [id, t] : transfers_) {
    if (!t->in_multi) continue;
    StreamLiveness::Action action = t->liveness.Check(now, t->headers_complete);
    int fd = -1;
    std::optional<ReadIdlePing::Reads> reads;
    if (action == StreamLiveness::Action::kReadSocket) {
      fd = Http2Socket(*t);
      if (fd >= 0) reads = ReadIdlePing::SocketReads(fd);
      action = t->liveness.CheckReads(reads, now);
    }
    if (action == StreamLiveness::Action::kDead) {
      FailTransfer(t.get(), t->liveness.Dead(t->description));
    } else if (action == StreamLiveness::Action::kPing) {
      pinging.emplace_back(t.get(), *reads);
      ping_sockets.insert(fd);
    }
  }
  if (pinging.empty()) return;
  // One call pings every pooled HTTP/2 connection, so several quiet
  // watches on one connection share a PING.
  curl_easy_upkeep(pinger_.get());
  // curl 8.14 only queues the PING frame; a transfer's receive path
  // flushes the queue, so run it once (it reads nothing and returns).
  for (int fd : ping_sockets) SocketAction(fd, CURL_CSELECT_IN);
  LogDebug("sent an HTTP/2 PING: " + pinging.front().first->description +
           " read nothing for " + FormatDuration(pinging.front().second.idle) +
           (pinging.size() > 1
                ? " (and " + std::to_string(pinging.size() - 1) + " more)"
                : ""));
  for (auto& [t, reads] : pinging) t->liveness.Pinged(reads, now);
}

void CurlTransport::FailTransfer(Transfer* t, Status why) {
  // A connection that stopped answering must not carry the retry: curl
  // would otherwise keep it pooled (HTTP/2 survives a removed stream).
  curl_easy_setopt(t->easy.get(), CURLOPT_FORBID_REUSE, 1L);
  curl_multi_remove_handle(multi_.get(), t->easy.get());
  t->in_multi = false;
  t->finished = true;
  t->result = std::move(why);
  needs_delivery_ = true;
}

void CurlTransport::Deliver() {
  needs_delivery_ = false;
  std::vector<uint64_t> ids;
  for (const auto& [id, t] : transfers_) {
    if ((t->headers_complete && !t->headers_delivered) || !t->body.empty() ||
        t->finished) {
      ids.push_back(id);
    }
  }
  for (uint64_t id : ids) {
    auto it = transfers_.find(id);
    if (it == transfers_.end()) continue;  // Cancelled by an earlier sink.
    Transfer* t = it->second.get();
    delivering_ = id;
    bool ok_end = t->finished && t->result.ok();
    if (!t->headers_delivered && (t->headers_complete || ok_end)) {
      t->headers_delivered = true;
      if (t->http_status == 0) {
        long code = 0;
        curl_easy_getinfo(t->easy.get(), CURLINFO_RESPONSE_CODE, &code);
        t->http_status = static_cast<int>(code);
      }
      if (t->sink) t->sink->OnHeaders(t->http_status, t->response_headers);
    }
    if (!t->cancelled && !t->body.empty()) {
      std::string data;
      data.swap(t->body);
      if (t->sink) t->sink->OnData(data);
    }
    bool erase = t->cancelled;
    if (!t->cancelled && t->finished && t->body.empty()) {
      if (t->sink) t->sink->OnDone(t->result);
      erase = true;
    }
    delivering_ = 0;
    if (erase) transfers_.erase(id);
  }
}

}  // namespace k8s_agent::kube
