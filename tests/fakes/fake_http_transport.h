// SPDX-License-Identifier: Apache-2.0
// An HttpTransport whose answers the test scripts step by step.

#ifndef K8S_AGENT_TESTS_FAKES_FAKE_HTTP_TRANSPORT_H_
#define K8S_AGENT_TESTS_FAKES_FAKE_HTTP_TRANSPORT_H_

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "plugin/kube/http.h"

namespace k8s_agent::kube {

/// Records every request (method, path, headers) and lets the test play
/// the server: Headers(), Data() in any chunking, Done(). The test stands
/// in for the event loop, so sinks are called directly from these methods,
/// never from Start(), as with the real transport.
class FakeHttpTransport : public HttpTransport {
 public:
  struct Exchange {
    HttpRequest request;
    HttpSink* sink = nullptr;
    bool cancelled = false;  ///< The caller destroyed its HttpCall.
    bool done = false;       ///< Done() was delivered.
  };

  std::unique_ptr<HttpCall> Start(const HttpRequest& request,
                                  HttpSink* sink) override {
    auto exchange = std::make_shared<Exchange>();
    exchange->request = request;
    exchange->sink = sink;
    exchanges_.push_back(exchange);
    return std::make_unique<Call>(exchange);
  }
  void InvalidateToken() override { ++token_invalidations_; }

  size_t size() const { return exchanges_.size(); }
  const HttpRequest& request(size_t i) const {
    return exchanges_.at(i)->request;
  }
  const HttpRequest& last() const { return exchanges_.back()->request; }
  size_t last_index() const { return exchanges_.size() - 1; }
  /// Still waiting for an answer: neither done nor cancelled.
  bool active(size_t i) const {
    return !exchanges_.at(i)->cancelled && !exchanges_.at(i)->done;
  }
  bool cancelled(size_t i) const { return exchanges_.at(i)->cancelled; }
  int token_invalidations() const { return token_invalidations_; }

  void Headers(size_t i, int status,
               const std::map<std::string, std::string>& headers = {}) {
    if (auto* sink = Sink(i)) sink->OnHeaders(status, headers);
  }
  void Data(size_t i, std::string_view bytes) {
    if (auto* sink = Sink(i)) sink->OnData(bytes);
  }
  void Done(size_t i, const Status& status = OkStatus()) {
    if (auto* sink = Sink(i)) {
      exchanges_.at(i)->done = true;
      sink->OnDone(status);
    }
  }
  /// A whole answer: status, body in one chunk, clean end.
  void Respond(size_t i, int status, std::string_view body,
               const std::map<std::string, std::string>& headers = {}) {
    Headers(i, status, headers);
    if (!body.empty()) Data(i, body);
    Done(i);
  }

 private:
  class Call : public HttpCall {
   public:
    explicit Call(std::shared_ptr<Exchange> e) : exchange_(std::move(e)) {}
    ~Call() override {
      if (!exchange_->done) exchange_->cancelled = true;
    }

   private:
    std::shared_ptr<Exchange> exchange_;
  };

  HttpSink* Sink(size_t i) {
    Exchange& e = *exchanges_.at(i);
    return e.cancelled || e.done ? nullptr : e.sink;
  }

  std::deque<std::shared_ptr<Exchange>> exchanges_;
  int token_invalidations_ = 0;
};

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_TESTS_FAKES_FAKE_HTTP_TRANSPORT_H_
