// SPDX-License-Identifier: Apache-2.0
// An HttpTransport in front of the real one that answers the agents'
// lookups of one pod by name from a namespace list they share.

#ifndef K8S_AGENT_PLUGIN_KUBE_SHARED_LOOKUP_TRANSPORT_H_
#define K8S_AGENT_PLUGIN_KUBE_SHARED_LOOKUP_TRANSPORT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "plugin/base/clock.h"
#include "plugin/base/event_loop.h"
#include "plugin/kube/http.h"
#include "plugin/kube/pod_list_cache.h"

namespace k8s_agent::kube {

/// How long a lookup waits for another agent's list before it asks the API
/// server itself: a namespace LIST from the watch cache takes well under a
/// second, so only a lister that hangs or died costs this.
inline constexpr Duration kSharedListPatience = std::chrono::seconds(3);
/// How often a waiting lookup tries the lock and the stamp again.
inline constexpr Duration kSharedListRetry = std::chrono::milliseconds(10);

/// Why: mpirun starts one agent per host at once, and each one's lookup is
/// one field-selected LIST (PodResolver::Lookup) over its own TLS
/// connection, which is most of the agent's CPU (docs/performance.md).
/// Here the first of them lists the namespace once (paged, from the watch
/// cache, as PodResolver's own lists) into a PodListCache; the others wait
/// for it on a timer and are answered from it, as the API server would
/// have answered them then: a PodList holding that pod at the list's
/// resourceVersion, from which the agent watches as usual. So they open no
/// connection at all, and the API server gets one request for N agents.
///
/// Only that lookup is ever answered here (GET .../pods?fieldSelector=
/// metadata.name%3DNAME&resourceVersion=0); every other request goes to
/// `inner` unchanged, and so does the lookup when the shared list cannot
/// answer it: the pod was not in a list younger than the cache's max age
/// (not created yet, or the list failed: kUnlistable), there is no
/// private directory, or the lister did not finish within the patience.
/// A list that fails is not retried here: the lookups then go to the API
/// server, whose answer the agent's own retry policy judges.
class SharedLookupTransport : public HttpTransport, public Pollable {
 public:
  /// Makes the cache of namespace `ns` (the caller keys it).
  using CacheFactory =
      std::function<std::unique_ptr<PodListCache>(const std::string& ns)>;

  /// `inner` must outlive this transport and be driven by the same loop.
  SharedLookupTransport(HttpTransport* inner, CacheFactory caches,
                        Clock* clock);
  ~SharedLookupTransport() override;

  std::unique_ptr<HttpCall> Start(const HttpRequest& request,
                                  HttpSink* sink) override;
  void InvalidateToken() override { inner_->InvalidateToken(); }
  std::string DescribeCredential() const override {
    return inner_->DescribeCredential();
  }

  void CollectFds(std::vector<pollfd>*) override {}
  TimePoint NextWake() const override;
  void OnFdReady(int, short, TimePoint) override {}
  void OnTimer(TimePoint now) override;

  /// Lookups answered from a shared list so far (tests, -v).
  int answered() const { return answered_; }
  /// Namespace lists this process made for the others.
  int lists() const { return lists_; }

  /// The pod name when `request` is the one lookup answered here, and its
  /// namespace in `ns`; "" otherwise.
  static std::string NameLookup(const HttpRequest& request, std::string* ns);

 private:
  class LookupCall;
  class ListSink;
  struct Lookup {
    HttpRequest request;
    HttpSink* sink = nullptr;
    std::string ns, name;
    TimePoint since;
    TimePoint wake;  // TimePoint::max() while awaiting this process's list.
    std::unique_ptr<HttpCall> forwarded;
  };
  struct Namespace {
    std::unique_ptr<PodListCache> cache;
    std::unique_ptr<ListSink> list;  // This process lists it now.
  };

  Namespace& For(const std::string& ns);
  void Cancel(uint64_t id);
  // Answers, forwards or keeps waiting; may run the sink (last act).
  void Step(uint64_t id, TimePoint now);
  void Forward(Lookup* lookup);
  void Answer(uint64_t id, const PodListCache::Entry& entry);
  void StartList(const std::string& ns, const HttpRequest& like);
  // The list ended (stored or not): its lookups look again at once.
  void Listed(const std::string& ns, TimePoint now);

  HttpTransport* inner_;
  CacheFactory caches_;
  Clock* clock_;
  std::map<std::string, Namespace> namespaces_;
  std::map<uint64_t, Lookup> lookups_;
  uint64_t next_id_ = 1;
  int answered_ = 0;
  int lists_ = 0;
};

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_SHARED_LOOKUP_TRANSPORT_H_
