// SPDX-License-Identifier: Apache-2.0
// CurlTransport: curl_multi_socket_action driven by the EventLoop.

#include "plugin/kube/curl_transport.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <utility>

#include "plugin/base/log.h"
#include "plugin/base/strings.h"
#include "plugin/kube/bearer_token.h"

namespace k8s_agent::kube {
namespace {

// TCP keepalive finds a dead peer on an idle watch long before the idle
// timer, and keeps NAT/conntrack entries alive.
constexpr long kKeepIdleSeconds = 30;
constexpr long kKeepIntervalSeconds = 10;

std::once_flag g_curl_init;

// With no CA configured (an API server with a publicly signed certificate,
// as kubectl accepts), the distribution's trust store, found at run time:
// this libcurl has no CA path built in, since the build machine's would be
// wrong elsewhere. Debian/Ubuntu, RHEL/Fedora, SUSE, Alpine, as Go looks.
const char* SystemCaBundle() {
  static const char* const kBundles[] = {
      "/etc/ssl/certs/ca-certificates.crt",
      "/etc/pki/tls/certs/ca-bundle.crt",
      "/etc/ssl/ca-bundle.pem",
      "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
      "/etc/ssl/cert.pem",
  };
  static const char* const found = [] {
    for (const char* path : kBundles) {
      if (::access(path, R_OK) == 0) return path;
    }
    return static_cast<const char*>(nullptr);
  }();
  return found;
}

}  // namespace

// One request: the easy handle and what its callbacks buffered for the
// next delivery from the loop.
struct CurlTransport::Transfer {
  CurlTransport* owner = nullptr;
  uint64_t id = 0;
  CurlEasy easy;
  CurlSlist headers;
  std::string description;  // "GET https://host/path", for messages.
  HttpSink* sink = nullptr;
  bool streaming = false;
  Duration idle_timeout{};
  TimePoint last_activity{};
  char errbuf[CURL_ERROR_SIZE] = {};
  bool in_multi = false;

  int http_status = 0;
  std::map<std::string, std::string> response_headers;
  bool headers_complete = false;
  bool headers_delivered = false;
  std::string body;
  bool finished = false;
  Status result;
  bool cancelled = false;
};

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
  if (!config_.token_file.empty() || !config_.token.empty()) {
    auto token = CurrentToken();
    if (!token.ok()) return token.status();
  }
  // An insecure-skip-tls-verify config was warned about once, by
  // LoadClusterConfig, where it was read.
  multi_.reset(curl_multi_init());
  if (!multi_) return InternalError("curl_multi_init failed");
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
  multi_.reset();
}

StatusOr<std::string> CurlTransport::CurrentToken() {
  if (config_.token_file.empty()) {
    if (config_.token.empty()) return config_.token;
    return BearerTokenFrom(config_.token, "the kubeconfig's token");
  }
  struct stat st;
  if (::stat(config_.token_file.c_str(), &st) != 0) {
    return UnauthenticatedError("token file " + config_.token_file + ": " +
                                std::strerror(errno));
  }
  int64_t mtime_ns =
      static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (token_valid_ && st.st_ino == token_ino_ && st.st_size == token_size_ &&
      mtime_ns == token_mtime_ns_) {
    return token_;
  }
  auto text = ReadFileToString(config_.token_file, 1 << 20);
  if (!text.ok()) {
    return UnauthenticatedError(text.status().message());
  }
  StatusOr<std::string> token =
      BearerTokenFrom(*text, "token file " + config_.token_file);
  if (!token.ok()) return token.status();
  token_ = std::move(token).value();
  token_valid_ = true;
  token_ino_ = st.st_ino;
  token_size_ = st.st_size;
  token_mtime_ns_ = mtime_ns;
  return token_;
}

void CurlTransport::InvalidateToken() { token_valid_ = false; }

Status CurlTransport::Configure(Transfer* t, const HttpRequest& request,
                                const std::string& token) {
  CURL* e = t->easy.get();
  std::string url = config_.server + request.path;
  t->description = request.method + " " + url;
  curl_easy_setopt(e, CURLOPT_URL, url.c_str());
  curl_easy_setopt(e, CURLOPT_PRIVATE, t);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->errbuf);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, kKeepIdleSeconds);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, kKeepIntervalSeconds);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, long{kConnectTimeoutMs});
  // A watch lasts minutes by design; only our idle timer bounds it. Other
  // requests fail only when stalled (below 1 byte/s for the whole window).
  if (!request.streaming) {
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, kRequestStallSeconds);
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

  // TLS: trust exactly the configured CA (not the system store too).
  if (config_.ca_file.empty() && config_.ca_pem.empty() &&
      SystemCaBundle() != nullptr) {
    curl_easy_setopt(e, CURLOPT_CAINFO, SystemCaBundle());
  }
  if (!config_.ca_file.empty()) {
    curl_easy_setopt(e, CURLOPT_CAINFO, config_.ca_file.c_str());
    curl_easy_setopt(e, CURLOPT_CAPATH, nullptr);
  }
#if LIBCURL_VERSION_NUM >= 0x074D00
  if (!config_.ca_pem.empty()) {
    curl_blob blob{config_.ca_pem.data(), config_.ca_pem.size(),
                   CURL_BLOB_COPY};
    curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &blob);
    curl_easy_setopt(e, CURLOPT_CAPATH, nullptr);
  }
  if (!config_.client_cert_pem.empty()) {
    curl_blob blob{config_.client_cert_pem.data(),
                   config_.client_cert_pem.size(), CURL_BLOB_COPY};
    curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &blob);
    curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
  }
  if (!config_.client_key_pem.empty()) {
    curl_blob blob{config_.client_key_pem.data(), config_.client_key_pem.size(),
                   CURL_BLOB_COPY};
    curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &blob);
    curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
  }
#else
  if (!config_.ca_pem.empty() || !config_.client_cert_pem.empty() ||
      !config_.client_key_pem.empty()) {
    return FailedPreconditionError(
        "kubeconfig *-data fields need libcurl >= 7.77; use file paths");
  }
#endif
  if (!config_.client_cert_file.empty()) {
    curl_easy_setopt(e, CURLOPT_SSLCERT, config_.client_cert_file.c_str());
  }
  if (!config_.client_key_file.empty()) {
    curl_easy_setopt(e, CURLOPT_SSLKEY, config_.client_key_file.c_str());
  }
  if (config_.insecure_skip_tls_verify) {
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
  }

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
  for (const std::string& h : request.headers) ok = ok && add(h);
  if (!token.empty()) ok = ok && add("Authorization: Bearer " + token);
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
  t->idle_timeout =
      milliseconds(request.streaming ? request.idle_timeout_ms : 0);
  t->last_activity = clock_->Now();
  t->easy.reset(curl_easy_init());
  Status status = t->easy ? OkStatus() : InternalError("curl_easy_init failed");
  StatusOr<std::string> token = std::string();
  if (status.ok()) token = CurrentToken();
  if (status.ok() && !token.ok()) status = token.status();
  if (status.ok()) status = Configure(t.get(), request, *token);
  if (status.ok() &&
      curl_multi_add_handle(multi_.get(), t->easy.get()) != CURLM_OK) {
    status = InternalError("curl_multi_add_handle failed");
  }
  if (status.ok()) {
    t->in_multi = true;  // curl asks for a 0 ms timer: OnTimer starts it.
  } else {
    // Reported through the sink like any other failure, from the loop.
    t->finished = true;
    t->result = status;
    needs_delivery_ = true;
  }
  uint64_t id = t->id;
  transfers_.emplace(id, std::move(t));
  return std::make_unique<Call>(this, id);
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
  t->last_activity = t->owner->clock_->Now();
  return size * n;
}

size_t CurlTransport::OnHeader(char* data, size_t size, size_t n, void* p) {
  auto* t = static_cast<Transfer*>(p);
  std::string_view line(data, size * n);
  t->last_activity = t->owner->clock_->Now();
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
}

TimePoint CurlTransport::NextWake() const {
  if (needs_delivery_) return TimePoint();  // Due now; min() would overflow.
  TimePoint wake = timer_at_;
  for (const auto& [id, t] : transfers_) {
    if (t->in_multi && t->idle_timeout > Duration::zero()) {
      wake = std::min(wake, t->last_activity + t->idle_timeout);
    }
  }
  return wake;
}

void CurlTransport::OnFdReady(int fd, short revents, TimePoint) {
  if (sockets_.find(fd) == sockets_.end()) return;  // Closed meanwhile.
  int mask = 0;
  if (revents & (POLLIN | POLLHUP)) mask |= CURL_CSELECT_IN;
  if (revents & POLLOUT) mask |= CURL_CSELECT_OUT;
  if (revents & (POLLERR | POLLNVAL)) mask |= CURL_CSELECT_ERR;
  SocketAction(fd, mask);
  Deliver();
}

void CurlTransport::OnTimer(TimePoint now) {
  if (timer_at_ <= now) {
    timer_at_ = TimePoint::max();
    SocketAction(CURL_SOCKET_TIMEOUT, 0);
  }
  CheckIdle(now);
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
    t->result = code == CURLE_OK ? OkStatus() : MapCurlError(code, *t);
    needs_delivery_ = true;
  }
}

void CurlTransport::CheckIdle(TimePoint now) {
  for (auto& [id, t] : transfers_) {
    if (!t->in_multi || t->idle_timeout <= Duration::zero()) continue;
    if (now - t->last_activity < t->idle_timeout) continue;
    curl_multi_remove_handle(multi_.get(), t->easy.get());
    t->in_multi = false;
    t->finished = true;
    t->result = UnavailableError(t->description + ": no data for " +
                                 FormatDuration(t->idle_timeout) +
                                 " (idle timeout; connection presumed dead)");
    needs_delivery_ = true;
  }
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

Status CurlTransport::MapCurlError(CURLcode code, const Transfer& t) const {
  std::string detail = curl_easy_strerror(code);
  if (t.errbuf[0] != '\0') detail += ": " + Printable(t.errbuf);
  std::string what = t.description + ": " + detail;
  bool tls_trust = false;
  switch (code) {
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CIPHER:
      tls_trust = true;
      break;
    case CURLE_SSL_CONNECT_ERROR:
      // Also a reset during the handshake (transient); only certificate
      // complaints mean the configuration is wrong.
      tls_trust = detail.find("certificate") != std::string::npos ||
                  detail.find("verify") != std::string::npos;
      break;
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return InvalidArgumentError(what);
    default:
      break;
  }
  if (tls_trust) {
    return FailedPreconditionError(
        "TLS: x509: certificate verify failed: " + what +
        " (check --certificate-authority or the kubeconfig's "
        "certificate-authority for " +
        config_.server + ")");
  }
  // Refused, reset, timeouts, DNS: the server may come back.
  return UnavailableError(what);
}

}  // namespace k8s_agent::kube
