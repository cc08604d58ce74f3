// SPDX-License-Identifier: Apache-2.0
// SharedLookupTransport: the lookups it answers, the list it makes for
// them, and everything else passed through.

#include "plugin/kube/shared_lookup_transport.h"

#include <malloc.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "plugin/base/log.h"
#include "plugin/base/strings.h"
#include "plugin/kube/json_depth.h"

namespace k8s_agent::kube {
namespace {

using nlohmann::json;

constexpr char kNamespacesPrefix[] = "/api/v1/namespaces/";
constexpr char kLookupQuery[] = "?fieldSelector=metadata.name%3D";
constexpr char kLookupVersion[] = "&resourceVersion=0";
// As KubeClient's kListPageSize and body bound: the same paging and the
// same limit on what one page may be.
constexpr int kPageSize = 500;
constexpr size_t kMaxPageBytes = 64u << 20;

bool IsNameChar(char c, bool dot) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         (dot && c == '.');
}

}  // namespace

// The handle the caller holds for an answered or forwarded lookup.
class SharedLookupTransport::LookupCall : public HttpCall {
 public:
  LookupCall(SharedLookupTransport* owner, uint64_t id)
      : owner_(owner), id_(id) {}
  ~LookupCall() override { owner_->Cancel(id_); }

 private:
  SharedLookupTransport* owner_;
  uint64_t id_;
};

// One namespace list, page by page, into the cache.
class SharedLookupTransport::ListSink : public HttpSink {
 public:
  ListSink(SharedLookupTransport* owner, std::string ns, PodListCache* cache,
           HttpRequest first)
      : owner_(owner),
        ns_(std::move(ns)),
        cache_(cache),
        request_(std::move(first)) {}

  void Begin(const std::string& continue_token) {
    HttpRequest page = request_;
    page.path =
        request_.path + "?limit=" + std::to_string(kPageSize) +
        (continue_token.empty() ? std::string("&resourceVersion=0")
                                : "&continue=" + PercentEncode(continue_token));
    http_status_ = 0;
    body_.clear();
    too_big_ = false;
    call_ = owner_->inner_->Start(page, this);
  }

  void OnHeaders(int http_status,
                 const std::map<std::string, std::string>&) override {
    http_status_ = http_status;
  }
  void OnData(std::string_view bytes) override {
    if (body_.size() + bytes.size() > kMaxPageBytes) {
      too_big_ = true;
      return;
    }
    if (!too_big_) body_.append(bytes);
  }
  void OnDone(const Status& status) override {
    std::string why = Page(status);
    if (why.empty() && !continue_token_.empty()) {
      Begin(continue_token_);  // Replaces the call that runs this.
      return;
    }
    if (why.empty()) {
      Status stored = cache_->Store(pods_, rv_);
      if (!stored.ok()) LogDebug("shared pod list: " + stored.message());
    } else {
      Status stored = cache_->StoreUnlistable(why);
      if (!stored.ok()) LogDebug("shared pod list: " + stored.message());
    }
    cache_->Release();
    SharedLookupTransport* owner = owner_;
    std::string ns = ns_;
    owner->Listed(ns, owner->clock_->Now());  // Last: destroys this sink.
  }

 private:
  // Takes one page in; "" when it was good, else why the list is not kept.
  std::string Page(const Status& status) {
    if (!status.ok()) return status.message();
    if (http_status_ < 200 || http_status_ >= 300) {
      return "the API server answered HTTP " + std::to_string(http_status_);
    }
    if (too_big_) return "a page larger than 64 MiB";
    if (Status depth = CheckJsonDepth(body_); !depth.ok()) {
      return depth.message();
    }
    json doc = json::parse(body_, nullptr, false);
    body_.clear();
    if (!doc.is_object() || !doc.contains("items") ||
        !doc["items"].is_array()) {
      return "the list is not a PodList";
    }
    const json& meta = doc.value("metadata", json::object());
    if (!meta.is_object()) return "the list has no metadata";
    // Every page belongs to the first page's snapshot; its version is the
    // one to watch from.
    if (rv_.empty()) rv_ = meta.value("resourceVersion", "");
    continue_token_ = meta.value("continue", "");
    for (const json& item : doc["items"]) {
      if (pods_.size() >= kMaxSharedPods) {
        return "more than " + std::to_string(kMaxSharedPods) + " pods";
      }
      const json* name = nullptr;
      if (item.is_object() && item.contains("metadata") &&
          item["metadata"].is_object() && item["metadata"].contains("name")) {
        name = &item["metadata"]["name"];
      }
      if (name == nullptr || !name->is_string()) continue;
      pods_.emplace_back(name->get<std::string>(), item.dump());
    }
    if (rv_.empty()) return "the list has no resourceVersion";
    return "";
  }

  SharedLookupTransport* owner_;
  std::string ns_;
  PodListCache* cache_;
  HttpRequest request_;  // Path without the query; the lookup's headers.
  std::unique_ptr<HttpCall> call_;
  int http_status_ = 0;
  std::string body_;
  bool too_big_ = false;
  std::string rv_;
  std::string continue_token_;
  std::vector<std::pair<std::string, std::string>> pods_;
};

SharedLookupTransport::SharedLookupTransport(HttpTransport* inner,
                                             CacheFactory caches, Clock* clock)
    : inner_(inner), caches_(std::move(caches)), clock_(clock) {}

SharedLookupTransport::~SharedLookupTransport() {
  // The lists first: their calls belong to `inner_`, as the lookups'.
  for (auto& [ns, n] : namespaces_) {
    n.list.reset();
    if (n.cache) n.cache->Release();
  }
  lookups_.clear();
}

std::string SharedLookupTransport::NameLookup(const HttpRequest& request,
                                              std::string* ns) {
  if (request.method != "GET" || request.streaming) return "";
  const std::string& p = request.path;
  if (!StartsWith(p, kNamespacesPrefix)) return "";
  size_t ns_begin = sizeof(kNamespacesPrefix) - 1;
  size_t ns_end = p.find('/', ns_begin);
  if (ns_end == std::string::npos || ns_end == ns_begin) return "";
  for (size_t i = ns_begin; i < ns_end; ++i) {
    if (!IsNameChar(p[i], /*dot=*/false)) return "";
  }
  std::string rest = p.substr(ns_end);
  std::string head = std::string("/pods") + kLookupQuery;
  if (!StartsWith(rest, head) || !EndsWith(rest, kLookupVersion)) return "";
  std::string name = rest.substr(
      head.size(), rest.size() - head.size() - (sizeof(kLookupVersion) - 1));
  if (name.empty()) return "";
  for (char c : name) {
    if (!IsNameChar(c, /*dot=*/true)) return "";
  }
  *ns = p.substr(ns_begin, ns_end - ns_begin);
  return name;
}

std::unique_ptr<HttpCall> SharedLookupTransport::Start(
    const HttpRequest& request, HttpSink* sink) {
  std::string ns;
  std::string name = NameLookup(request, &ns);
  if (name.empty()) return inner_->Start(request, sink);
  uint64_t id = next_id_++;
  Lookup& lookup = lookups_[id];
  lookup.request = request;
  lookup.sink = sink;
  lookup.ns = std::move(ns);
  lookup.name = std::move(name);
  lookup.since = clock_->Now();
  // Never the sink from inside Start: the loop's next turn steps it.
  lookup.wake = lookup.since;
  return std::make_unique<LookupCall>(this, id);
}

SharedLookupTransport::Namespace& SharedLookupTransport::For(
    const std::string& ns) {
  Namespace& n = namespaces_[ns];
  if (!n.cache) n.cache = caches_(ns);
  return n;
}

void SharedLookupTransport::Cancel(uint64_t id) { lookups_.erase(id); }

TimePoint SharedLookupTransport::NextWake() const {
  TimePoint next = TimePoint::max();
  for (const auto& [id, lookup] : lookups_) {
    if (!lookup.forwarded) next = std::min(next, lookup.wake);
  }
  return next;
}

void SharedLookupTransport::OnTimer(TimePoint now) {
  std::vector<uint64_t> due;
  for (const auto& [id, lookup] : lookups_) {
    if (!lookup.forwarded && lookup.wake <= now) due.push_back(id);
  }
  // By id: an answer's sink may cancel (erase) any lookup meanwhile.
  for (uint64_t id : due) {
    if (lookups_.count(id) != 0) Step(id, now);
  }
}

void SharedLookupTransport::Step(uint64_t id, TimePoint now) {
  Lookup& lookup = lookups_.at(id);
  Namespace& n = For(lookup.ns);
  PodListCache& cache = *n.cache;
  if (!cache.shared()) return Forward(&lookup);
  if (std::optional<PodListCache::Entry> hit = cache.Find(lookup.name)) {
    return Answer(id, *hit);
  }
  if (n.list) {  // This process lists the namespace now.
    lookup.wake = TimePoint::max();
    return;
  }
  // A list younger than the max age without this pod (not created then),
  // or one that could not be made: the API server answers.
  if (cache.latest() != PodListCache::Latest::kNone) return Forward(&lookup);
  switch (cache.TryLock()) {
    case PodListCache::Lock::kHeld:
      // Another agent may have listed between the look and the lock.
      if (std::optional<PodListCache::Entry> hit = cache.Find(lookup.name)) {
        cache.Release();
        return Answer(id, *hit);
      }
      if (cache.latest() != PodListCache::Latest::kNone) {
        cache.Release();
        return Forward(&lookup);
      }
      lookup.wake = TimePoint::max();
      StartList(lookup.ns, lookup.request);
      return;
    case PodListCache::Lock::kBusy:
      if (now - lookup.since < kSharedListPatience) {
        lookup.wake = now + kSharedListRetry;
        return;
      }
      LogInfo(lookup.name + ": another agent has listed the namespace for " +
              FormatDuration(now - lookup.since) + "; looking up unshared");
      return Forward(&lookup);
    case PodListCache::Lock::kUnshared:
      return Forward(&lookup);
  }
}

void SharedLookupTransport::Forward(Lookup* lookup) {
  lookup->forwarded = inner_->Start(lookup->request, lookup->sink);
}

void SharedLookupTransport::Answer(uint64_t id,
                                   const PodListCache::Entry& entry) {
  auto it = lookups_.find(id);
  HttpSink* sink = it->second.sink;
  std::string name = it->second.name;
  lookups_.erase(it);  // The caller's handle then cancels nothing.
  ++answered_;
  LogInfo(name + ": answered from the namespace's pod list, read " +
          FormatDuration(entry.age) + " ago by one of this job's agents");
  std::string body = R"({"kind":"PodList","apiVersion":"v1","metadata":{)" +
                     std::string(R"("resourceVersion":)") +
                     json(entry.rv).dump() + R"(},"items":[)" + entry.object +
                     "]}";
  sink->OnHeaders(200, {{"content-type", "application/json"}});
  sink->OnData(body);
  sink->OnDone(OkStatus());  // Last: the sink may destroy its caller.
}

void SharedLookupTransport::StartList(const std::string& ns,
                                      const HttpRequest& like) {
  Namespace& n = For(ns);
  HttpRequest first = like;
  first.path = like.path.substr(0, like.path.find('?'));
  ++lists_;
  n.list = std::make_unique<ListSink>(this, ns, n.cache.get(), first);
  n.list->Begin("");
}

void SharedLookupTransport::Listed(const std::string& ns, TimePoint now) {
  for (auto& [id, lookup] : lookups_) {
    if (lookup.ns == ns && !lookup.forwarded &&
        lookup.wake == TimePoint::max()) {
      lookup.wake = now;
    }
  }
  namespaces_[ns].list.reset();  // Last use of the sink: this runs in it.
  // The list's body, DOM and pod dumps are free now, but their heap pages
  // are still resident: malloc carves the SSH phase's big buffers (the exec
  // channel's two 256 KiB ones, LazyBuffer) out of that free space rather
  // than mmapping them, and the trim after the API phase (ReleaseApi)
  // cannot give back what they then hold, though they are mostly unwritten.
  // A lister of 64 pods idled ~540 KiB above a plain agent that way.
  // Trimmed now, those pages come back zero-filled only where written.
  ::malloc_trim(0);
}

}  // namespace k8s_agent::kube
