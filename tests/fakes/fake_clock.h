// SPDX-License-Identifier: Apache-2.0
// A Clock that moves only when a test advances it.

#ifndef K8S_AGENT_TESTS_FAKES_FAKE_CLOCK_H_
#define K8S_AGENT_TESTS_FAKES_FAKE_CLOCK_H_

#include "plugin/base/clock.h"

namespace k8s_agent {

class FakeClock : public Clock {
 public:
  TimePoint Now() const override { return now_; }
  void Advance(Duration d) { now_ += d; }
  void Set(TimePoint t) { now_ = t; }

 private:
  // Start far from the epoch so "time 0" bugs show up.
  TimePoint now_ = TimePoint() + std::chrono::hours(1000);
};

}  // namespace k8s_agent

#endif  // K8S_AGENT_TESTS_FAKES_FAKE_CLOCK_H_
