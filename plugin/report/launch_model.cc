// SPDX-License-Identifier: Apache-2.0
// BuildJobLaunch: group records by host, build each host, then the job.

#include "plugin/report/launch_model.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "plugin/base/natural_order.h"
#include "plugin/base/strings.h"
#include "plugin/report/host_launch.h"

namespace k8s_agent::report {
namespace {

constexpr PhaseInfo kPhases[kPhaseCount] = {
    {"scheduling", "scheduling", "#8c6bb1",
     "pod created -> PodScheduled (waiting for a node)"},
    {"container", "container", "#f28e2b",
     "scheduled -> container running (init containers, image pull, create)"},
    {"launcher", "launcher", "#c7c7c7",
     "container running -> agent asked for the host (mpirun/orted not yet "
     "there)"},
    {"sshd", "sshd", "#4e79a7",
     "container running (or asked) -> the SSH attempt that succeeded began"},
    {"handshake", "handshake", "#59a14f",
     "that attempt: TCP connect, SSH handshake, host key, auth"},
    {"command", "command", "#edc948",
     "SSH ready -> remote command started (exec request accepted)"},
};

constexpr size_t kSlowest = 5;

int64_t Percentile(std::vector<int64_t> v, int pct) {
  if (v.empty()) return 0;
  size_t k = (v.size() - 1) * static_cast<size_t>(pct) / 100;
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(k), v.end());
  return v[k];
}

// Each host's records: the agent run that began last (several runs for
// one host: a trace appended to by several jobs, or --wait-only before
// mpirun), built into its marks. Hosts come out in name order.
StatusOr<std::vector<HostLaunch>> CollectHosts(
    const std::vector<TraceRecord>& records) {
  // host -> (file, pid) -> that run's records, in input order.
  using RunKey = std::pair<std::string, int>;
  std::map<std::string, std::map<RunKey, std::vector<const TraceRecord*>>>
      by_host;
  for (const TraceRecord& r : records) {
    by_host[r.host][{r.file, r.pid}].push_back(&r);
  }
  if (by_host.empty()) {
    return InvalidArgumentError("no trace record names a host");
  }
  std::vector<HostLaunch> hosts;
  for (auto& [name, runs] : by_host) {
    const std::vector<const TraceRecord*>* last = nullptr;
    int64_t last_begin = INT64_MIN;
    for (auto& [key, recs] : runs) {
      std::stable_sort(recs.begin(), recs.end(),
                       [](const TraceRecord* x, const TraceRecord* y) {
                         return x->t_wall_us < y->t_wall_us;
                       });
      if (recs.front()->t_wall_us >= last_begin) {
        last_begin = recs.front()->t_wall_us;
        last = &recs;
      }
    }
    HostLaunch host = CollectHostMarks(*last);
    host.launches = static_cast<int>(runs.size());
    hosts.push_back(std::move(host));
  }
  return hosts;
}

// Pods already up when the first agent began are not part of this
// start-up: their history is cut there. Then the rows are put in order.
void BuildAllSpans(std::vector<HostLaunch>* hosts) {
  int64_t first_begin = INT64_MAX;
  for (const HostLaunch& h : *hosts) {
    if (h.begin) first_begin = std::min(first_begin, *h.begin);
  }
  for (HostLaunch& h : *hosts) {
    std::optional<int64_t> up =
        h.container_started ? h.container_started : h.running_seen;
    h.already_running =
        up && *up + StampResolutionUs(*up) <= first_begin && *up < first_begin;
    BuildSpans(h.already_running ? first_begin : INT64_MIN, &h);
  }
  std::sort(hosts->begin(), hosts->end(),
            [](const HostLaunch& a, const HostLaunch& b) {
              if (a.first_us != b.first_us) return a.first_us < b.first_us;
              return NaturalLess(a.host, b.host);
            });
}

std::string SkewNote(const HostLaunch& h) {
  return "clock skew: " + h.host + ": " + h.skew->field + " is " +
         FormatMicrosPadded(h.skew->ahead_us) +
         " later than the agent first saw it, so the clock of " +
         (h.skew->field == "created"
              ? std::string("the API server")
              : "node " + (h.node.empty() ? "?" : h.node)) +
         " is at least that far ahead of the agent's (placed at first "
         "sight)";
}

// The job's span, its reached and failed hosts, and the notes a reader
// needs to trust the numbers (repeated launches, clock skew).
void SumUpHosts(JobLaunch* job) {
  job->t0_us = INT64_MAX;
  job->end_us = INT64_MIN;
  for (size_t i = 0; i < job->hosts.size(); ++i) {
    const HostLaunch& h = job->hosts[i];
    job->t0_us = std::min(job->t0_us, h.first_us);
    if (h.reached) {
      ++job->reached;
      job->end_us = std::max(job->end_us, h.end_us);
    }
    if (h.failed()) job->failed.push_back(i);
    if (h.launches > 1) {
      job->notes.push_back(h.host + ": " + std::to_string(h.launches) +
                           " agent runs in the traces; reporting the last (" +
                           h.file + ", pid " + std::to_string(h.pid) + ")");
    }
    if (h.skew && h.skew->ahead_us >= 1000) job->notes.push_back(SkewNote(h));
  }
  if (job->end_us == INT64_MIN) {
    for (const HostLaunch& h : job->hosts) {
      job->end_us = std::max(job->end_us, h.end_us);
    }
  }
}

// Per-phase statistics over the hosts that went through the phase.
std::vector<PhaseSummary> SummarizePhases(
    const std::vector<HostLaunch>& hosts) {
  std::vector<int64_t> per_phase[kPhaseCount];
  for (const HostLaunch& h : hosts) {
    for (int p = 0; p < kPhaseCount; ++p) {
      if (h.HasPhase(PhaseAt(p))) per_phase[p].push_back(h.PhaseUs(PhaseAt(p)));
    }
  }
  std::vector<PhaseSummary> phases;
  for (int p = 0; p < kPhaseCount; ++p) {
    if (per_phase[p].empty()) continue;
    PhaseSummary s;
    s.phase = PhaseAt(p);
    s.hosts = static_cast<int>(per_phase[p].size());
    s.median_us = Percentile(per_phase[p], 50);
    s.p90_us = Percentile(per_phase[p], 90);
    for (const HostLaunch& h : hosts) {
      if (h.HasPhase(s.phase) && h.PhaseUs(s.phase) >= s.max_us) {
        if (h.PhaseUs(s.phase) > s.max_us || s.max_host.empty()) {
          s.max_us = h.PhaseUs(s.phase);
          s.max_host = h.host;
        }
      }
    }
    phases.push_back(s);
  }
  return phases;
}

// The reached hosts, the one that got there last first.
std::vector<size_t> ReachedLastFirst(const std::vector<HostLaunch>& hosts) {
  std::vector<size_t> reached;
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (hosts[i].reached) reached.push_back(i);
  }
  std::stable_sort(reached.begin(), reached.end(), [&](size_t a, size_t b) {
    return hosts[a].end_us > hosts[b].end_us;
  });
  return reached;
}

// Tree spawn: follow "launched from" up from `host` while it names a host
// here (each at most once: a loop in the traces ends the walk).
std::vector<size_t> LaunchedBy(const std::vector<HostLaunch>& hosts,
                               size_t host) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < hosts.size(); ++i) index[hosts[i].host] = i;
  std::vector<bool> seen(hosts.size(), false);
  seen[host] = true;
  std::vector<size_t> chain;
  for (size_t cur = host;;) {
    auto it = index.find(hosts[cur].launched_from);
    if (it == index.end() || seen[it->second]) break;
    seen[it->second] = true;
    chain.push_back(it->second);
    cur = it->second;
  }
  return chain;
}

// Critical path: the last host, and the phase that most exceeded the
// median of its peers (its creation offset counts as one: pods created
// one by one make the last one late with no slow phase at all).
CriticalPath FindCriticalPath(const JobLaunch& job, size_t last) {
  CriticalPath c;
  c.host = last;
  const HostLaunch& h = job.hosts[c.host];
  int64_t best = INT64_MIN;
  for (const PhaseSummary& s : job.phases) {
    if (!h.HasPhase(s.phase)) continue;
    int64_t took = h.PhaseUs(s.phase);
    int64_t excess = took - s.median_us;
    if (excess > best || (excess == best && took > c.took_us)) {
      best = excess;
      c.phase = s.phase;
      c.took_us = took;
      c.median_us = s.median_us;
    }
  }
  std::vector<int64_t> offsets;
  for (const HostLaunch& o : job.hosts)
    offsets.push_back(o.first_us - job.t0_us);
  int64_t offset = h.first_us - job.t0_us;
  int64_t median_offset = Percentile(offsets, 50);
  if (offset - median_offset > best) {
    c.created_late = true;
    c.took_us = offset;
    c.median_us = median_offset;
  }
  c.launched_by = LaunchedBy(job.hosts, c.host);
  return c;
}

}  // namespace

const PhaseInfo& InfoFor(Phase phase) {
  return kPhases[static_cast<int>(phase)];
}

int64_t HostLaunch::PhaseUs(Phase phase) const {
  int64_t sum = 0;
  for (const Span& s : spans) {
    if (s.phase == phase) sum += s.duration_us();
  }
  return sum;
}

bool HostLaunch::HasPhase(Phase phase) const {
  return std::any_of(spans.begin(), spans.end(),
                     [&](const Span& s) { return s.phase == phase; });
}

StatusOr<JobLaunch> BuildJobLaunch(const std::vector<TraceRecord>& records) {
  JobLaunch job;
  K8S_ASSIGN_OR_RETURN(job.hosts, CollectHosts(records));
  BuildAllSpans(&job.hosts);
  SumUpHosts(&job);
  job.phases = SummarizePhases(job.hosts);
  std::vector<size_t> reached = ReachedLastFirst(job.hosts);
  job.slowest.assign(reached.begin(),
                     reached.begin() + static_cast<ptrdiff_t>(
                                           std::min(kSlowest, reached.size())));
  if (!reached.empty()) job.critical = FindCriticalPath(job, reached.front());
  return job;
}

}  // namespace k8s_agent::report
