// SPDX-License-Identifier: Apache-2.0
// Exponential backoff with full jitter and reset after a quiet period.

#ifndef K8S_AGENT_PLUGIN_BASE_BACKOFF_H_
#define K8S_AGENT_PLUGIN_BASE_BACKOFF_H_

#include <cstdint>
#include <random>

#include "plugin/base/clock.h"

namespace k8s_agent {

/// Delay policy between retries. Each Next() doubles the ceiling (up to
/// max) and returns a random delay in [ceiling/2, ceiling]: half jitter
/// keeps 128 agents from retrying in lockstep while never retrying at 0.
class Backoff {
 public:
  struct Params {
    Duration initial;
    Duration max;
    /// With no failure for this long, start again from `initial`.
    Duration reset_after;
  };

  /// The API server policy, client-go's reflector defaults: 800 ms doubling
  /// to 30 s, which caps a broken server's load at ~0.03 QPS per agent.
  static Params ApiDefaults();
  /// The SSH probe policy: 5 ms doubling to 25 ms. A refused connect to a
  /// pod that is starting sshd costs one RST on the pod network, so ~50
  /// probes a second per waiting host are cheap, and the command then
  /// starts within ~25 ms plus one handshake of sshd listening (measured:
  /// a 100 ms cap gave a p95 of 178 ms, bench/ item 2).
  static Params SshProbeDefaults();
  /// The SSH probe policy for failures other than a refused connect (a
  /// reset or close during the handshake, as sshd's MaxStartups does, or a
  /// timeout): 50 ms doubling to 2 s. Something answers there, and
  /// hammering it every 25 ms (measured: 249 connections in 5 s) only
  /// adds to what throttles it.
  static Params SshProbeTroubleDefaults();

  Backoff(Params params, uint64_t seed);

  /// Returns the delay before the next attempt.
  Duration Next(TimePoint now);
  /// The delay after a refusal whose Retry-After said `server_delay`
  /// (zero: none): never sooner than the server asked, plus a random
  /// share of the backoff, in [server_delay, server_delay + Next(now)].
  /// Agents refused together (one job's agents share one APF flow) come
  /// back spread over a window that widens with each refusal, so a 429
  /// storm drains instead of repeating in lockstep.
  Duration NextAfter(Duration server_delay, TimePoint now);
  void Reset();
  int failures() const { return failures_; }

 private:
  Params params_;
  std::mt19937_64 rng_;
  Duration ceiling_;
  TimePoint last_failure_{};
  int failures_ = 0;
};

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_BASE_BACKOFF_H_
