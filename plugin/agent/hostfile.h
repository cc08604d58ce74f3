// SPDX-License-Identifier: Apache-2.0
// --hostfile: the pods matching a label selector as an Open MPI hostfile
// (or Horovod host-discovery output), optionally waiting for N of them.

#ifndef K8S_AGENT_PLUGIN_AGENT_HOSTFILE_H_
#define K8S_AGENT_PLUGIN_AGENT_HOSTFILE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "plugin/agent/agent_runtime.h"
#include "plugin/agent/ssh_probe.h"
#include "plugin/base/backoff.h"
#include "plugin/base/event_loop.h"
#include "plugin/base/status.h"
#include "plugin/kube/cluster_config.h"
#include "plugin/kube/kube_client.h"
#include "plugin/kube/pod_watcher.h"
#include "plugin/ssh/ssh_client.h"
#include "plugin/ssh/ssh_options.h"

namespace k8s_agent {

/// How each line is written.
enum class HostfileFormat {
  kOpenMpi,  ///< "w-0 slots=4" (or "w-0": Open MPI then counts cores).
  kHorovod,  ///< "w-0:4" (or "w-0": horovodrun uses --slots-per-host).
};

struct HostfileOptions {
  std::string ns;
  std::string label_selector;
  int slots = 0;                    ///< >0: this many on every line.
  std::string slots_from_resource;  ///< Non-empty: slots from this resource.
  bool ssh_ready = false;           ///< Only pods whose sshd answers.
  int wait_for_count = 0;           ///< >0: wait until this many qualify.
  Duration timeout = std::chrono::minutes(10);
  /// --api-first-answer-timeout: see kube::CheckFirstAnswer.
  Duration api_first_answer_timeout = std::chrono::seconds(30);
  /// See PodWatcher::set_watch_idle_timeout.
  Duration watch_idle_timeout = std::chrono::seconds(90);
  HostfileFormat format = HostfileFormat::kOpenMpi;
  /// --ssh-ready: each pod's ssh settings, by pod name (the HOST mpirun
  /// will pass); unset: ssh's defaults.
  ssh::SshSettingsFor ssh_for;
};

/// One line of the output. slots == 0 means "omit the count".
struct HostEntry {
  std::string name;
  int slots = 0;
};

/// The hostfile text: one line per entry, in the given order.
std::string FormatHostfile(const std::vector<HostEntry>& entries,
                           HostfileFormat format);

/// Collects the qualifying pods, driven by the event loop:
///
///   list (selector) --synced--> evaluate every pod:
///     Running + IP + not terminating (+ slots > 0 from the resource)
///     [--ssh-ready] probe each such pod: connect, handshake, host key,
///                   auth, close
///   without --wait-for-count: done once the list is in and every probe
///     has an answer (one attempt each);
///   with --wait-for-count N: keep watching (reflector rules) and
///     re-probing pods whose sshd failed (SshProbe's backoff) until N
///     qualify;
///   --timeout: kDeadlineExceeded naming how many of N qualified and why
///     each other pod did not;
///   no answer at all from the API server within
///     --api-first-answer-timeout: kUnavailable naming the server (a
///     wrong --server must not wait out --timeout).
class HostfileCollector : public Pollable {
 public:
  HostfileCollector(HostfileOptions options, kube::KubeClient* client,
                    ssh::SshConnector* connector, Clock* clock, uint64_t seed);
  ~HostfileCollector() override;

  void Start(TimePoint now);
  bool done() const { return done_; }
  /// Once done: ok, or why no hostfile can be printed.
  const Status& status() const { return status_; }
  /// Once done and ok: the qualifying pods, in NaturalLess order
  /// (plugin/base/natural_order.h: w-2 before w-10).
  const std::vector<HostEntry>& entries() const { return entries_; }

  void CollectFds(std::vector<pollfd>* fds) override;
  TimePoint NextWake() const override;
  void OnFdReady(int fd, short revents, TimePoint now) override;
  void OnTimer(TimePoint now) override;

 private:
  // One pod's SSH check; kept while the pod keeps its uid and IPs. The
  // retry rules are SshProbe's; the answer is the collector's.
  struct Probe {
    enum class Result { kPending, kReady, kRefused, kRejected };
    Probe(ssh::SshConnector* connector, const std::string& name, uint64_t seed)
        : ssh(connector, name, seed) {}
    SshProbe ssh;
    Result result = Result::kPending;
  };

  bool waiting() const;
  void Evaluate(TimePoint now);
  std::vector<HostEntry> Classify(TimePoint now);
  // Empty when the pod qualifies (before SSH), setting *slots; else why
  // not, for humans.
  std::string WhyNot(const kube::Pod& pod, int64_t* slots) const;
  // Creates, resets or (re)starts the pod's probe as its state requires.
  void UpdateProbe(const kube::Pod& pod, TimePoint now);
  // Records a settled attempt in the probe's answer. Never re-enters
  // Evaluate.
  void Settle(Probe* probe);
  std::string ProbeSummary(const Probe& probe) const;
  // "2 of 3 qualify, only 2 pod(s) exist; not ready: w-1: Pending; passed
  // over (ended or terminating): w-2-x: Failed".
  std::string Situation() const;
  std::string Scope() const;
  void Fail(const Status& why);
  void Stop();

  HostfileOptions options_;
  kube::KubeClient* client_;
  ssh::SshConnector* connector_;  // May be null without --ssh-ready.
  Clock* clock_;
  uint64_t seed_;

  std::unique_ptr<kube::PodWatcher> watcher_;
  std::map<std::string, std::unique_ptr<Probe>> probes_;  // By pod name.
  std::map<int, std::string> fd_owner_;  // Probe fd -> pod name.
  Deadline deadline_ = Deadline::Infinite();
  TimePoint next_progress_ = TimePoint::max();
  TimePoint started_{};
  // From the last evaluation: why each matching pod does not qualify, and
  // which of them only lack the --slots-from-resource resource.
  std::map<std::string, std::string> not_ready_;
  // Ended (Failed/Succeeded) or terminating pods: never going to qualify.
  std::map<std::string, std::string> passed_over_;
  std::set<std::string> no_resource_;
  std::set<std::string> ssh_failed_;  // Running, but the probe failed.
  int ready_count_ = 0;

  bool done_ = false;
  Status status_;
  std::vector<HostEntry> entries_;
};

/// What RunHostfile is asked to do.
struct HostfileRun {
  RunSetup setup;
  /// What to list and print. Its scope (ns, label_selector, timeout,
  /// ssh_for) comes from `setup`: the caller sets the rest.
  HostfileOptions options;
};

struct HostfileResult {
  std::string text;      ///< The hostfile, for stdout.
  int local_signal = 0;  ///< Non-zero: interrupted by this signal.
};

/// Runs the collector on a real event loop. A non-ok Status is the failure
/// to report (exit 255): API errors that do not heal, or the timeout.
StatusOr<HostfileResult> RunHostfile(const HostfileRun& run);

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_AGENT_HOSTFILE_H_
