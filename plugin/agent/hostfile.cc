// SPDX-License-Identifier: Apache-2.0
// HostfileCollector and RunHostfile: selector list/watch, SSH probes, output.

#include "plugin/agent/hostfile.h"

#include <algorithm>
#include <limits>
#include <set>

#include "plugin/agent/pod_target.h"
#include "plugin/base/log.h"
#include "plugin/base/natural_order.h"
#include "plugin/base/strings.h"
#include "plugin/kube/api_health.h"
#include "plugin/kube/quantity.h"

namespace k8s_agent {
namespace {

// Probes run in parallel, but not unboundedly: a selector matching 2000
// pods must not open 2000 sockets at once.
constexpr size_t kMaxConcurrentProbes = 32;
// Progress while waiting for --wait-for-count: first after this long, then
// at most every `kProgressEvery`.
constexpr Duration kProgressAfter = seconds(5);
constexpr Duration kProgressEvery = seconds(30);
// Pods named in a timeout or progress message; the rest are counted.
constexpr size_t kMaxNamed = 10;

// "w-1: Pending", one per pod.
std::vector<std::string> Lines(const std::map<std::string, std::string>& why) {
  std::vector<std::string> lines;
  for (const auto& [name, reason] : why) lines.push_back(name + ": " + reason);
  return lines;
}

std::string JoinLimited(const std::vector<std::string>& items) {
  if (items.size() <= kMaxNamed) return Join(items, "; ");
  std::vector<std::string> head(items.begin(), items.begin() + kMaxNamed);
  return Join(head, "; ") + "; and " +
         std::to_string(items.size() - kMaxNamed) + " more";
}

}  // namespace

std::string FormatHostfile(const std::vector<HostEntry>& entries,
                           HostfileFormat format) {
  std::string out;
  for (const HostEntry& e : entries) {
    out += e.name;
    if (e.slots > 0) {
      out += format == HostfileFormat::kHorovod
                 ? ":" + std::to_string(e.slots)
                 : " slots=" + std::to_string(e.slots);
    }
    out += "\n";
  }
  return out;
}

// ---- HostfileCollector ------------------------------------------------------

HostfileCollector::HostfileCollector(HostfileOptions options,
                                     kube::KubeClient* client,
                                     ssh::SshConnector* connector, Clock* clock,
                                     uint64_t seed)
    : options_(std::move(options)),
      client_(client),
      connector_(connector),
      clock_(clock),
      seed_(seed) {}

HostfileCollector::~HostfileCollector() = default;

bool HostfileCollector::waiting() const { return options_.wait_for_count > 0; }

std::string HostfileCollector::Scope() const {
  if (options_.label_selector.empty()) {
    return "pods in namespace " + options_.ns;
  }
  return "pods matching " + options_.label_selector + " in namespace " +
         options_.ns;
}

void HostfileCollector::Start(TimePoint now) {
  started_ = now;
  deadline_ = Deadline::After(now, options_.timeout);
  if (waiting()) next_progress_ = now + kProgressAfter;
  watcher_ = std::make_unique<kube::PodWatcher>(
      client_, clock_, options_.ns,
      kube::PodWatcher::Selector{options_.label_selector},
      [this] {
        if (!done_) Evaluate(clock_->Now());
      },
      seed_);
  // Without a count to wait for, one list answers the question.
  watcher_->set_list_only(!waiting());
  watcher_->set_watch_idle_timeout(options_.watch_idle_timeout);
  watcher_->Start(std::nullopt, "", now);
}

std::string HostfileCollector::WhyNot(const kube::Pod& pod,
                                      int64_t* slots) const {
  if (pod.deleting) return kube::PhaseSummary(pod) + " (terminating)";
  if (pod.phase != "Running") return kube::PhaseSummary(pod);
  if (pod.pod_ip.empty()) return "Running without an IP";
  *slots = options_.slots;
  if (!options_.slots_from_resource.empty()) {
    StatusOr<int64_t> n =
        kube::PodResourceSlots(pod, options_.slots_from_resource);
    if (!n.ok()) return n.status().message();
    if (*n <= 0) {
      return "no " + options_.slots_from_resource +
             " in its containers' resources";
    }
    *slots = std::min<int64_t>(*n, std::numeric_limits<int>::max());
  }
  return "";
}

void HostfileCollector::UpdateProbe(const kube::Pod& pod, TimePoint now) {
  std::unique_ptr<Probe>& slot = probes_[pod.name];
  if (!slot) {
    slot = std::make_unique<Probe>(connector_, pod.name,
                                   seed_ + 1 + probes_.size());
  }
  Probe& p = *slot;
  // Replaced or moved: the old answer means nothing.
  if (p.ssh.SetTarget(pod.uid, PodAddresses(pod))) {
    p.result = Probe::Result::kPending;
  }
  // An attempt may have finished since its last event.
  if (p.ssh.OnTimer(now)) Settle(&p);
  if (p.result != Probe::Result::kPending || !p.ssh.due(now)) return;
  size_t active = 0;
  for (const auto& [name, probe] : probes_) {
    if (probe->ssh.state() == SshProbe::State::kConnecting) ++active;
  }
  if (active >= kMaxConcurrentProbes) return;  // Next settle frees a slot.
  // The pod name is what mpirun will pass as HOST: its ssh settings, and
  // host keys checked under it.
  ssh::ResolvedSshOptions settings;
  settings.host_key_alias = pod.name;
  if (options_.ssh_for) {
    StatusOr<ssh::ResolvedSshOptions> s = options_.ssh_for(pod.name);
    if (!s.ok()) {
      Fail(s.status().WithContext("pod " + pod.name));
      return;
    }
    settings = *std::move(s);
  }
  p.ssh.Start(settings, now);
  Settle(&p);
}

void HostfileCollector::Settle(Probe* p) {
  switch (p->ssh.state()) {
    case SshProbe::State::kReady:
      p->ssh.TakeConnection();  // Proven; close it: mpirun makes its own.
      p->result = Probe::Result::kReady;
      return;
    case SshProbe::State::kFailed:
      p->result = Probe::Result::kRejected;
      return;
    case SshProbe::State::kBackoff:
      // Without a count to wait for, one attempt answers; with one, the
      // probe retries when its backoff says (sshd may be starting).
      if (!waiting()) p->result = Probe::Result::kRefused;
      return;
    case SshProbe::State::kIdle:
    case SshProbe::State::kConnecting:
      return;
  }
}

std::string HostfileCollector::ProbeSummary(const Probe& p) const {
  std::string s = "Running at " + p.ssh.ip();
  switch (p.result) {
    case Probe::Result::kReady:
      return s;
    case Probe::Result::kPending:
      if (p.ssh.last_error().empty()) return s + ", ssh not checked yet";
      return s + " but ssh is not ready (" + std::to_string(p.ssh.attempts()) +
             " attempt(s), last: " + p.ssh.last_error() + ")";
    case Probe::Result::kRefused:
    case Probe::Result::kRejected:
      break;
  }
  return s + " but ssh failed: " + p.ssh.last_error();
}

// Sorts every matching pod into ready, not ready (and why), passed over;
// starts, keeps or drops each one's SSH probe.
std::vector<HostEntry> HostfileCollector::Classify(TimePoint now) {
  not_ready_.clear();
  passed_over_.clear();
  no_resource_.clear();
  ssh_failed_.clear();
  std::vector<HostEntry> ready;
  std::set<std::string> probed;
  for (const auto& [name, pod] : watcher_->pods()) {
    int64_t slots = 0;
    std::string why = WhyNot(pod, &slots);
    if (!IsLive(pod)) {
      // An Indexed Job's Failed attempt, a finished or terminating pod: it
      // will never qualify, so it neither counts as existing nor as waited
      // for.
      passed_over_[name] = why;
      continue;
    }
    if (!why.empty()) {
      not_ready_[name] = why;
      if (pod.phase == "Running" && !pod.pod_ip.empty()) {
        no_resource_.insert(name);  // Only the slots disqualify it.
      }
      continue;
    }
    if (options_.ssh_ready) {
      probed.insert(name);
      UpdateProbe(pod, now);
      // A failure (the user's ssh settings) dropped the watcher and the
      // probes, and with them what this loop walks.
      if (done_) return {};
      const Probe& p = *probes_.at(name);
      if (p.result != Probe::Result::kReady) {
        not_ready_[name] = ProbeSummary(p);
        if (!p.ssh.last_error().empty()) ssh_failed_.insert(name);
        continue;
      }
    }
    ready.push_back({name, static_cast<int>(slots)});
  }
  for (auto it = probes_.begin(); it != probes_.end();) {
    // Gone, or no longer Running: abandon its probe.
    it = probed.count(it->first) ? std::next(it) : probes_.erase(it);
  }
  return ready;
}

void HostfileCollector::Evaluate(TimePoint now) {
  if (done_) return;
  if (watcher_->state() == kube::PodWatcher::State::kFailed) {
    Fail(watcher_->error().WithContext("listing " + Scope()));
    return;
  }
  if (!watcher_->synced()) return;
  std::vector<HostEntry> ready = Classify(now);
  if (done_) return;
  ready_count_ = static_cast<int>(ready.size());

  bool settled;
  if (waiting()) {
    settled = ready_count_ >= options_.wait_for_count;
  } else {
    settled = std::none_of(probes_.begin(), probes_.end(), [](const auto& kv) {
      return kv.second->result == Probe::Result::kPending;
    });
  }
  if (!settled) return;
  std::sort(ready.begin(), ready.end(),
            [](const HostEntry& a, const HostEntry& b) {
              return NaturalLess(a.name, b.name);
            });
  entries_ = std::move(ready);
  for (const auto& [name, why] : not_ready_) {
    if (no_resource_.count(name)) {
      LogWarning("skipping pod " + name + ": " + why);
    } else if (ssh_failed_.count(name)) {
      // A Running pod dropped for its ssh answer (sshd throttling with
      // MaxStartups, a reset) is news without -v: the job gets fewer hosts.
      LogWarning("leaving out pod " + name + ": " + why +
                 " (run again, or use --wait-for-count N to wait for it)");
    } else {
      LogInfo("not listing pod " + name + ": " + why);
    }
  }
  for (const auto& [name, why] : passed_over_) {
    LogInfo("passing over pod " + name + ": " + why);
  }
  LogInfo("listed " + std::to_string(entries_.size()) + " " + Scope() +
          " after " + FormatDuration(now - started_));
  done_ = true;
  Stop();
}

std::string HostfileCollector::Situation() const {
  if (!watcher_ || !watcher_->synced()) {
    return "no complete pod list from the API server yet (-vv shows the "
           "errors)";
  }
  std::string s = std::to_string(ready_count_) + " of " +
                  std::to_string(options_.wait_for_count) + " qualify";
  if (!waiting()) s = std::to_string(ready_count_) + " qualify";
  int live = static_cast<int>(
      std::count_if(watcher_->pods().begin(), watcher_->pods().end(),
                    [](const auto& kv) { return IsLive(kv.second); }));
  if (waiting() && live < options_.wait_for_count) {
    s += ", only " + std::to_string(live) + " pod(s) exist";
  }
  if (!not_ready_.empty()) {
    s += "; not ready: " + JoinLimited(Lines(not_ready_));
  }
  if (!passed_over_.empty()) {
    s += "; passed over (ended or terminating): " +
         JoinLimited(Lines(passed_over_));
  }
  return s;
}

void HostfileCollector::Fail(const Status& why) {
  if (done_) return;
  done_ = true;
  status_ = why;
  Stop();
}

void HostfileCollector::Stop() {
  // Also from inside the watcher's own callback (kube_client.h's rule).
  // Probe connections are ours and idle here.
  watcher_.reset();
  probes_.clear();
}

// ---- Loop plumbing ----------------------------------------------------------

void HostfileCollector::CollectFds(std::vector<pollfd>* fds) {
  fd_owner_.clear();
  if (done_) return;
  for (auto& [name, probe] : probes_) {
    size_t first = fds->size();
    probe->ssh.CollectFds(fds);
    for (size_t i = first; i < fds->size(); ++i) fd_owner_[(*fds)[i].fd] = name;
  }
}

TimePoint HostfileCollector::NextWake() const {
  if (done_) return TimePoint::max();
  TimePoint t = std::min(deadline_.at(), next_progress_);
  if (!client_->answered()) {
    t = std::min(t, started_ + options_.api_first_answer_timeout);
  }
  if (watcher_) t = std::min(t, watcher_->NextWake());
  size_t active = 0;
  for (const auto& [name, probe] : probes_) {
    if (probe->ssh.state() == SshProbe::State::kConnecting) {
      ++active;
      t = std::min(t, probe->ssh.NextWake());
    }
  }
  // A retry that is due but has no free slot waits for a settle, which
  // re-evaluates; waking for it would spin.
  if (active >= kMaxConcurrentProbes) return t;
  for (const auto& [name, probe] : probes_) {
    if (probe->result == Probe::Result::kPending &&
        probe->ssh.state() == SshProbe::State::kBackoff) {
      t = std::min(t, probe->ssh.retry_at());
    }
  }
  return t;
}

void HostfileCollector::OnFdReady(int fd, short revents, TimePoint now) {
  if (done_) return;
  auto owner = fd_owner_.find(fd);
  if (owner == fd_owner_.end()) return;
  auto it = probes_.find(owner->second);
  if (it == probes_.end()) return;
  if (it->second->ssh.OnFdReady(fd, revents, now)) {
    Settle(it->second.get());
    Evaluate(now);
  }
}

void HostfileCollector::OnTimer(TimePoint now) {
  if (done_) return;
  if (deadline_.Expired(now)) {
    std::string what = waiting() ? "waiting for " +
                                       std::to_string(options_.wait_for_count) +
                                       " " + Scope()
                                 : "listing " + Scope();
    Fail(DeadlineExceededError(
        "timed out after " + FormatDuration(options_.timeout) + " " + what +
        ": " + Situation() + " (raise --timeout, or see kubectl get pods -n " +
        options_.ns +
        (options_.label_selector.empty() ? ""
                                         : " -l " + options_.label_selector) +
        ")"));
    return;
  }
  if (Status s = kube::CheckFirstAnswer(
          client_->answered(), started_, options_.api_first_answer_timeout, now,
          client_->config().server,
          watcher_ ? &watcher_->api_health() : nullptr);
      !s.ok()) {
    Fail(s.WithContext("listing " + Scope()));
    return;
  }
  if (watcher_ && watcher_->NextWake() <= now) watcher_->OnTimer(now);
  if (done_) return;
  for (auto& [name, probe] : probes_) {
    if (probe->ssh.OnTimer(now)) Settle(probe.get());
  }
  if (now >= next_progress_) {
    next_progress_ = now + kProgressEvery;
    LogWarning("waiting for " + std::to_string(options_.wait_for_count) + " " +
               Scope() + ": " + Situation() + " (" +
               FormatDuration(now - started_) + " so far, timeout " +
               FormatDuration(options_.timeout) + ")");
  }
  Evaluate(now);
}

// ---- RunHostfile ------------------------------------------------------------

StatusOr<HostfileResult> RunHostfile(const HostfileRun& run) {
  Clock* clock = RealClock::Get();
  K8S_ASSIGN_OR_RETURN(std::unique_ptr<AgentRuntime> rt,
                       AgentRuntime::Create(run.setup, clock));
  HostfileOptions options = run.options;
  options.ns = run.setup.ns.empty() ? run.setup.cluster.ns : run.setup.ns;
  options.label_selector = run.setup.label_selector;
  // The first credential's wait (an exec plugin) counted against it.
  options.timeout =
      std::max(run.setup.timeout - rt->credential_wait(), Duration::zero());
  options.api_first_answer_timeout = run.setup.api_first_answer_timeout;
  options.watch_idle_timeout = run.setup.watch_idle_timeout;
  options.ssh_for = run.setup.ssh_for;
  HostfileCollector collector(options, rt->client(),
                              options.ssh_ready ? rt->connector() : nullptr,
                              clock, rt->seed());
  rt->loop()->Add(&collector);
  collector.Start(clock->Now());
  K8S_RETURN_IF_ERROR(rt->RunUntil([&] { return collector.done(); }));
  HostfileResult result;
  if (rt->signals().received() != 0) {
    result.local_signal = rt->signals().received();
    return result;
  }
  LogDebug("API requests: " + std::to_string(rt->client()->requests()));
  if (!collector.status().ok()) return collector.status();
  result.text = FormatHostfile(collector.entries(), options.format);
  return result;
}

}  // namespace k8s_agent
