// SPDX-License-Identifier: Apache-2.0
// CollectHostMarks / BuildSpans.

#include "plugin/report/host_launch.h"

#include <algorithm>
#include <string>

namespace k8s_agent::report {
namespace {

// A pod timestamp, the agent time of the first record that showed it, and
// of the last one before it that did not.
struct Seen {
  std::optional<int64_t> value;
  int64_t first_seen = 0;
  std::optional<int64_t> last_without;

  void Observe(const std::optional<int64_t>& v, int64_t now) {
    if (!v) {
      if (!value) last_without = now;
      return;
    }
    if (!value || *value != *v) {
      value = v;
      first_seen = now;
    }
  }
  // Between the agent's last sight without it and its first sight with it.
  // API times are whole seconds, cut down: without the lower bound a
  // container that started at 10.9 s would look up at 10.0 s, before an
  // agent that began at 10.5 s and saw it Pending.
  std::optional<int64_t> Placed() const {
    if (!value) return std::nullopt;
    int64_t v = last_without ? std::max(*value, *last_without) : *value;
    return std::min(v, first_seen);
  }
  int64_t Ahead() const { return value ? *value - first_seen : 0; }
};

void First(std::optional<int64_t>* mark, int64_t t) {
  if (!*mark) *mark = t;
}

// The pod's own clocks over its pod_status records.
struct PodClocks {
  Seen created, scheduled, started, initialized, containers_ready, ready;
  std::string uid;

  void Observe(const PodStatusData& p, int64_t t, bool ssh_ready) {
    // A replacement pod (new uid) restarts the pod's own timeline.
    if (!p.uid.empty() && p.uid != uid) {
      if (!uid.empty()) *this = PodClocks();
      uid = p.uid;
    }
    created.Observe(p.created, t);
    scheduled.Observe(p.scheduled, t);
    initialized.Observe(p.initialized, t);
    containers_ready.Observe(p.containers_ready, t);
    ready.Observe(p.ready, t);
    // The container that SSH reached is the one up when it did.
    if (!ssh_ready) started.Observe(p.container_started, t);
  }

  // The placed times, and the largest skew of the marks that bound phases.
  void Place(HostLaunch* h) const {
    h->created = created.Placed();
    h->scheduled = scheduled.Placed();
    h->container_started = started.Placed();
    h->initialized = initialized.Placed();
    h->containers_ready = containers_ready.Placed();
    h->ready = ready.Placed();
    for (const auto& [field, seen] :
         {std::pair{"created", &created}, std::pair{"scheduled", &scheduled},
          std::pair{"container_started", &started}}) {
      if (seen->Ahead() > 0 &&
          (!h->skew || seen->Ahead() > h->skew->ahead_us)) {
        h->skew = Skew{field, seen->Ahead()};
      }
    }
  }
};

void ObservePodStatus(const PodStatusData& p, int64_t t, PodClocks* clocks,
                      HostLaunch* h) {
  clocks->Observe(p, t, h->ssh_ready.has_value());
  if (!p.node.empty()) h->node = p.node;
  h->restarts = std::max(h->restarts, p.restarts);
  std::vector<std::string> reasons = p.waiting;
  if (!p.unschedulable.empty()) reasons.push_back(p.unschedulable);
  for (const std::string& w : reasons) {
    bool known = std::any_of(h->waiting.begin(), h->waiting.end(),
                             [&](const auto& s) { return s.second == w; });
    if (!known) h->waiting.emplace_back(t, w);
  }
}

// The agent's own marks: the first record of each event counts.
void ObserveAgentEvent(const TraceRecord& r, int64_t t, HostLaunch* h) {
  const std::string& e = r.event;
  if (e == "begin") {
    if (!h->begin) h->launched_from = r.on;
    First(&h->begin, t);
  } else if (e == "pod_running") {
    First(&h->running_seen, t);
  } else if (e == "ssh_ready") {
    if (!h->ssh_ready && r.attempt_t_mono_us && r.t_mono_us > 0) {
      int64_t back = r.t_mono_us - *r.attempt_t_mono_us;
      if (back >= 0) h->attempt_start = t - back;
    }
    First(&h->ssh_ready, t);
  } else if (e == "started") {
    First(&h->started, t);
  } else if (e == "exited") {
    if (!h->exited) h->exit_detail = r.detail;
    First(&h->exited, t);
  } else if (e == "failed") {
    if (!h->failed_at) h->failure = r.detail;
    First(&h->failed_at, t);
  }
}

// Whether the host got there, and where its row ends.
void SetOutcome(int64_t last_t, HostLaunch* h) {
  h->reached = h->started.has_value() || (h->ssh_ready && !h->failed_at);
  if (h->started) {
    h->end_us = *h->started;
  } else if (h->ssh_ready) {
    h->end_us = *h->ssh_ready;
  } else if (h->failed_at) {
    h->end_us = *h->failed_at;
  } else {
    h->end_us = last_t;
  }
}

}  // namespace

HostLaunch CollectHostMarks(const std::vector<const TraceRecord*>& records) {
  HostLaunch h;
  PodClocks clocks;
  int64_t last_t = 0;
  for (const TraceRecord* r : records) {
    const int64_t t = r->t_wall_us;
    last_t = std::max(last_t, t);
    if (h.host.empty()) {
      h.host = r->host;
      h.file = r->file;
      h.pid = r->pid;
    }
    if (!r->pod.empty()) h.pod = r->pod;
    if (r->event == "pod_status") {
      if (r->pod_status) ObservePodStatus(*r->pod_status, t, &clocks, &h);
    } else {
      ObserveAgentEvent(*r, t, &h);
    }
  }
  clocks.Place(&h);
  // Older agents wrote no begin: their first record is close to it.
  if (!h.begin && !records.empty()) h.begin = records.front()->t_wall_us;
  SetOutcome(last_t, &h);
  return h;
}

void BuildSpans(int64_t clip_us, HostLaunch* h) {
  // (time, phase that starts there); nullopt phase = the end.
  struct Mark {
    int64_t t;
    std::optional<Phase> next;
  };
  std::vector<Mark> marks;
  auto add = [&](const std::optional<int64_t>& t, std::optional<Phase> next) {
    if (t) marks.push_back({*t, next});
  };
  add(h->created, Phase::kScheduling);
  add(h->scheduled, Phase::kContainer);
  // Without pod_status records (older agents) the agent's sight of
  // Running stands in for the container's start.
  std::optional<int64_t> up =
      h->container_started ? h->container_started : h->running_seen;
  add(up, Phase::kSshd);
  if (up && h->begin && *h->begin > *up &&
      *h->begin >= *up + StampResolutionUs(*up)) {
    // Up before anyone asked: the wait was on the launcher, not the pod.
    // (Within a whole-second stamp's second the order is unknown: no
    // launcher time is invented then.)
    marks.back().next = Phase::kLauncher;
    add(h->begin, Phase::kSshd);
  }
  add(h->attempt_start, Phase::kHandshake);
  add(h->ssh_ready, Phase::kCommand);
  add(h->started, std::nullopt);

  h->spans.clear();
  int64_t cursor = INT64_MIN;
  for (size_t i = 0; i < marks.size(); ++i) {
    // Clocks and whole-second stamps may disorder marks: never go back.
    cursor = std::max(cursor, marks[i].t);
    marks[i].t = cursor;
  }
  auto push = [&](Phase phase, int64_t start, int64_t end, bool failed) {
    start = std::max(start, clip_us);
    // Zero-length phases stay: "0ms" is an answer, a missing phase is not.
    // One that only touches the cut is history, not this launch.
    if (end < start || (end == start && start == clip_us)) return;
    h->spans.push_back(Span{phase, start, end, failed});
  };
  for (size_t i = 0; i + 1 < marks.size(); ++i) {
    if (marks[i].next) push(*marks[i].next, marks[i].t, marks[i + 1].t, false);
  }
  if (h->failed_at && !marks.empty() && marks.back().next && !h->started) {
    push(*marks.back().next, marks.back().t,
         std::max(*h->failed_at, marks.back().t), true);
  }
  if (!h->spans.empty()) {
    h->first_us = h->spans.front().start_us;
  } else {
    h->first_us = h->begin.value_or(h->end_us);
  }
}

}  // namespace k8s_agent::report
