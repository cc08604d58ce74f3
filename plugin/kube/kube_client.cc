// SPDX-License-Identifier: Apache-2.0
// KubeClient: request building, response buffering and error mapping.

#include "plugin/kube/kube_client.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <utility>
#include <vector>

#include "plugin/base/strings.h"
#include "plugin/kube/api_status.h"
#include "plugin/kube/watch_decoder.h"

namespace k8s_agent::kube {
namespace {

constexpr char kAcceptHeader[] = "Accept: application/json";
constexpr char kUserAgentHeader[] = "User-Agent: k8s-agent/0.1";
// A list of a few thousand pods is a few MiB; anything past this is wrong.
constexpr size_t kMaxBodyBytes = 64u << 20;
// An error body is a small Status object; keep only its beginning.
constexpr size_t kMaxErrorBodyBytes = 64u << 10;
// The client-side idle limit of a watch exceeds the server's own
// timeoutSeconds by this much, so a healthy watch always ends server-side.
constexpr int kWatchIdleSlackSeconds = 30;
// Without timeoutSeconds the server picks 30-60 min; bookmarks arrive
// about every minute, so ten quiet minutes mean a dead connection.
constexpr int kDefaultWatchIdleSeconds = 600;

class Query {
 public:
  void Add(const char* key, const std::string& value) {
    if (value.empty()) return;
    text_ += text_.empty() ? '?' : '&';
    text_ += key;
    text_ += '=';
    text_ += PercentEncode(value);
  }
  const std::string& str() const { return text_; }

 private:
  std::string text_;
};

std::string PodsPath(const std::string& ns) {
  return "/api/v1/namespaces/" + PercentEncode(ns) + "/pods";
}

HttpRequest MakeGet(std::string path) {
  HttpRequest request;
  request.method = "GET";
  request.path = std::move(path);
  request.headers = {kAcceptHeader, kUserAgentHeader};
  return request;
}

}  // namespace

// Collects a whole (bounded) body, then hands it to `done_` once.
class KubeClient::BufferedCall : public HttpCall, public HttpSink {
 public:
  BufferedCall(KubeClient* client, const char* verb, std::string ns,
               std::function<void(StatusOr<std::string>)> done)
      : client_(client),
        verb_(verb),
        ns_(std::move(ns)),
        done_(std::move(done)) {}
  ~BufferedCall() override { inner_.reset(); }

  void set_inner(std::unique_ptr<HttpCall> inner) { inner_ = std::move(inner); }

  void OnHeaders(int http_status,
                 const std::map<std::string, std::string>& headers) override {
    client_->answered_ = true;
    http_status_ = http_status;
    headers_ = headers;
  }
  void OnData(std::string_view bytes) override {
    size_t limit = Ok() ? kMaxBodyBytes : kMaxErrorBodyBytes;
    if (body_.size() + bytes.size() > limit) {
      if (Ok()) too_big_ = true;
      bytes = bytes.substr(0, limit - std::min(limit, body_.size()));
    }
    body_.append(bytes);
  }
  void OnDone(const Status& status) override {
    StatusOr<std::string> result = Result(status);
    auto done = std::move(done_);
    done(std::move(result));  // Last: `done` may destroy this call.
  }

 private:
  bool Ok() const { return http_status_ >= 200 && http_status_ < 300; }
  StatusOr<std::string> Result(const Status& status) {
    if (!status.ok()) {
      return status.WithContext(std::string(verb_) + " pods in " + ns_);
    }
    if (!Ok()) {
      return client_->AnswerError(verb_, ns_, http_status_, headers_, body_);
    }
    if (too_big_) {
      return TooLargeError("response larger than " +
                           std::to_string(kMaxBodyBytes) + " bytes");
    }
    return std::move(body_);
  }

  KubeClient* client_;
  const char* verb_;
  std::string ns_;
  std::function<void(StatusOr<std::string>)> done_;
  int http_status_ = 0;
  std::map<std::string, std::string> headers_;
  std::string body_;
  bool too_big_ = false;
  std::unique_ptr<HttpCall> inner_;
};

// Decodes a watch stream as it arrives.
class KubeClient::WatchCall : public HttpCall, public HttpSink {
 public:
  WatchCall(KubeClient* client, std::string ns, EventCallback on_event,
            EndCallback end, std::function<void()> on_open)
      : client_(client),
        ns_(std::move(ns)),
        on_event_(std::move(on_event)),
        end_(std::move(end)),
        on_open_(std::move(on_open)) {}
  ~WatchCall() override {
    *alive_ = false;
    inner_.reset();
  }

  void set_inner(std::unique_ptr<HttpCall> inner) { inner_ = std::move(inner); }

  void OnHeaders(int http_status,
                 const std::map<std::string, std::string>& headers) override {
    client_->answered_ = true;
    http_status_ = http_status;
    headers_ = headers;
    if (http_status != 200 || !on_open_) return;
    std::function<void()> on_open = on_open_;  // It may destroy this call.
    on_open();
  }
  void OnData(std::string_view bytes) override {
    if (finished_) return;
    if (http_status_ != 200) {
      if (error_body_.size() < kMaxErrorBodyBytes) {
        error_body_.append(
            bytes.substr(0, kMaxErrorBodyBytes - error_body_.size()));
      }
      return;
    }
    if (!checked_body_) {
      checked_body_ = true;
      if (Status s = CheckWatchBody(bytes); !s.ok()) {
        Finish(s.WithContext("watch pods in " + ns_));
        return;
      }
    }
    std::vector<WatchEvent> events;
    Status s = decoder_.Feed(bytes, &events);
    if (!Deliver(events)) return;
    if (!s.ok()) Finish(s.WithContext("watch pods in " + ns_));
  }
  void OnDone(const Status& status) override {
    if (finished_) return;
    if (!status.ok()) {
      Finish(status.WithContext("watch pods in " + ns_));
      return;
    }
    if (http_status_ != 200) {
      Finish(client_->AnswerError("watch", ns_, http_status_, headers_,
                                  error_body_));
      return;
    }
    std::vector<WatchEvent> events;
    Status s = decoder_.Finish(&events);
    if (!Deliver(events)) return;
    Finish(s.ok() ? s : s.WithContext("watch pods in " + ns_));
  }

 private:
  // A 200 that is an HTML page (a login portal, a proxy's error page) is
  // no watch stream; say that rather than "malformed watch event".
  Status CheckWatchBody(std::string_view first_bytes) const {
    auto it = headers_.find("content-type");
    std::string type = it == headers_.end() ? "" : ToLower(it->second);
    std::string_view head = Trim(first_bytes.substr(0, 64));
    if (StartsWith(type, "text/html") || StartsWith(head, "<")) {
      return InternalError(
          "the server answered 200 with an HTML page (Content-Type \"" +
          Printable(type, 64) +
          "\"), not a watch stream: a proxy or login "
          "page in front of the API server? It begins " +
          "\"" + Printable(first_bytes.substr(0, 80)) + "\"");
    }
    return OkStatus();
  }
  // Returns false when a callback destroyed or finished this call.
  bool Deliver(const std::vector<WatchEvent>& events) {
    std::shared_ptr<bool> alive = alive_;
    for (const WatchEvent& event : events) {
      EventCallback on_event = on_event_;  // Survives our destruction.
      on_event(event);
      if (!*alive || finished_) return false;
    }
    return true;
  }
  void Finish(const Status& status) {
    finished_ = true;
    inner_.reset();  // Stop the transfer; the transport allows this here.
    auto end = std::move(end_);
    end(status);  // Last: `end` may destroy this call.
  }

  KubeClient* client_;
  std::string ns_;
  EventCallback on_event_;
  EndCallback end_;
  std::function<void()> on_open_;
  WatchDecoder decoder_;
  int http_status_ = 0;
  std::map<std::string, std::string> headers_;
  std::string error_body_;
  bool checked_body_ = false;
  bool finished_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::unique_ptr<HttpCall> inner_;
};

KubeClient::KubeClient(HttpTransport* transport, ClusterConfig config)
    : transport_(transport), config_(std::move(config)) {}

Status KubeClient::AnswerError(
    const char* verb, const std::string& ns, int http_status,
    const std::map<std::string, std::string>& headers, std::string_view body) {
  Status s = StatusFromApiResponse(http_status, body);
  // Retry-After (429, 503) travels in the Status; a header overrides the
  // body's retryAfterSeconds, as client-go reads it.
  auto retry_after = headers.find("retry-after");
  std::string wait;
  if (retry_after != headers.end()) {
    auto secs = ParseInt(Trim(retry_after->second));
    if (secs.ok() && *secs >= 0 && *secs <= 3600) {
      s = s.WithRetryAfter(seconds(*secs));
    }
  }
  if (s.retry_after().count() > 0) {
    wait = ", Retry-After " + FormatDuration(s.retry_after());
  }
  std::string target =
      std::string("\"") + verb + "\" \"pods\" in namespace \"" + ns + "\"";
  switch (s.code()) {
    case Code::kUnauthenticated: {
      // An exec plugin's token: its command, and how often it ran (the
      // transport knows; the config does not).
      std::string from_transport = transport_->DescribeCredential();
      std::string credentials = !from_transport.empty() ? from_transport
                                : !config_.token_file.empty()
                                    ? "token file " + config_.token_file
                                : !config_.token.empty() ? "kubeconfig token"
                                : !config_.client_cert_file.empty() ||
                                        !config_.client_cert_pem.empty()
                                    ? "client certificate"
                                    : "no credentials configured";
      return UnauthenticatedError(
          "unauthorized: the API server rejected the "
          "credentials (" +
          credentials + ") for " + target + ": " + s.message());
    }
    case Code::kPermissionDenied:
      return PermissionDeniedError(
          "forbidden: the service account cannot " + target +
          " (grant list/watch on pods: see images/k8s/role.yaml): " +
          s.message());
    case Code::kResourceExhausted:
      return ResourceExhaustedError("throttled by the API server (" +
                                    std::string(verb) + " pods" + wait +
                                    "): " + s.message())
          .WithRetryAfter(s.retry_after());
    default:
      return Status(s.code(), std::string(verb) + " pods in " + ns + wait +
                                  ": " + s.message())
          .WithRetryAfter(s.retry_after());
  }
}

ApiCall KubeClient::StartBuffered(
    HttpRequest request, std::function<void(StatusOr<std::string>)> done,
    const char* verb, const std::string& ns) {
  auto call = std::make_unique<BufferedCall>(this, verb, ns, std::move(done));
  ++requests_;
  call->set_inner(transport_->Start(request, call.get()));
  return call;
}

ApiCall KubeClient::ListPods(const std::string& ns, const ListOptions& options,
                             ListCallback done) {
  Query query;
  query.Add("fieldSelector", options.field_selector);
  query.Add("labelSelector", options.label_selector);
  if (options.limit > 0) query.Add("limit", std::to_string(options.limit));
  query.Add("continue", options.continue_token);
  if (options.continue_token.empty()) {
    query.Add("resourceVersion", options.resource_version);
  }
  std::string where = "list pods in " + ns;
  return StartBuffered(
      MakeGet(PodsPath(ns) + query.str()),
      [done = std::move(done), where](StatusOr<std::string> body) {
        if (!body.ok()) {
          done(body.status());
          return;
        }
        StatusOr<PodList> list = PodList::FromJson(*body);
        done(list.ok() ? std::move(list) : list.status().WithContext(where));
      },
      "list", ns);
}

ApiCall KubeClient::WatchPods(const std::string& ns,
                              const WatchOptions& options,
                              EventCallback on_event, EndCallback end) {
  Query query;
  query.Add("fieldSelector", options.field_selector);
  query.Add("labelSelector", options.label_selector);
  query.Add("resourceVersion", options.resource_version);
  if (options.allow_bookmarks) query.Add("allowWatchBookmarks", "true");
  if (options.timeout_seconds > 0) {
    query.Add("timeoutSeconds", std::to_string(options.timeout_seconds));
  }
  query.Add("watch", "true");
  HttpRequest request = MakeGet(PodsPath(ns) + query.str());
  request.streaming = true;
  request.idle_timeout_ms =
      1000 * (options.timeout_seconds > 0
                  ? options.timeout_seconds + kWatchIdleSlackSeconds
                  : kDefaultWatchIdleSeconds);
  request.ping_after_ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(options.ping_after)
          .count());
  request.ping_timeout_ms =
      static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                           options.ping_timeout)
                           .count());
  auto call = std::make_unique<WatchCall>(this, ns, std::move(on_event),
                                          std::move(end), options.on_open);
  ++requests_;
  call->set_inner(transport_->Start(request, call.get()));
  return call;
}

}  // namespace k8s_agent::kube
