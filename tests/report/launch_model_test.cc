// SPDX-License-Identifier: Apache-2.0
#include "plugin/report/launch_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugin/report/trace_reader.h"
#include "tests/fakes/status_matchers.h"
#include "tests/report/trace_builder.h"

namespace k8s_agent::report {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

JobLaunch Build(const std::vector<HostSpec>& hosts,
                const std::string& file = "trace.jsonl") {
  std::string text;
  for (const HostSpec& h : hosts) text += HostTrace(h);
  TraceInput input;
  EXPECT_THAT(ParseTraceText(text, file, &input), IsOk());
  auto job = BuildJobLaunch(input.records);
  EXPECT_THAT(job, IsOk());
  return job.ok() ? *job : JobLaunch();
}

const HostLaunch& Find(const JobLaunch& job, const std::string& host) {
  for (const HostLaunch& h : job.hosts) {
    if (h.host == host) return h;
  }
  ADD_FAILURE() << "no host " << host;
  static HostLaunch none;
  return none;
}

TEST(LaunchModelTest, PhasesOfOneHost) {
  JobLaunch job = Build({HostSpec()});
  ASSERT_THAT(job.hosts, SizeIs(1));
  const HostLaunch& h = job.hosts[0];
  EXPECT_EQ(h.PhaseUs(Phase::kScheduling), 1 * kSec);
  EXPECT_EQ(h.PhaseUs(Phase::kContainer), 2 * kSec);
  EXPECT_FALSE(h.HasPhase(Phase::kLauncher));
  EXPECT_EQ(h.PhaseUs(Phase::kSshd), 400 * kMs);
  EXPECT_EQ(h.PhaseUs(Phase::kHandshake), 50 * kMs);
  EXPECT_EQ(h.PhaseUs(Phase::kCommand), 10 * kMs);
  EXPECT_EQ(h.node, "node-a");
  EXPECT_TRUE(h.reached);
  EXPECT_EQ(job.t0_us, kBaseUs);
  EXPECT_EQ(job.end_us, kBaseUs + 3 * kSec + 460 * kMs);
  // Spans are back to back, in phase order.
  for (size_t i = 1; i < h.spans.size(); ++i) {
    EXPECT_EQ(h.spans[i].start_us, h.spans[i - 1].end_us);
    EXPECT_LT(static_cast<int>(h.spans[i - 1].phase),
              static_cast<int>(h.spans[i].phase));
  }
  ASSERT_THAT(h.waiting, SizeIs(1));
  EXPECT_EQ(h.waiting[0].second, "ContainerCreating");
}

TEST(LaunchModelTest, CriticalPathNamesTheSlowPhase) {
  std::vector<HostSpec> hosts;
  for (int i = 0; i < 5; ++i) {
    HostSpec h;
    h.host = "w-" + std::to_string(i);
    hosts.push_back(h);
  }
  // w-3 pulls its image for a minute.
  HostSpec& slow = hosts[3];
  slow.container_started = 63 * kSec;
  slow.running_seen = 63 * kSec + 100 * kMs;
  slow.attempt = 63 * kSec + 300 * kMs;
  slow.ssh_ready = 63 * kSec + 350 * kMs;
  slow.started = 63 * kSec + 360 * kMs;
  slow.waiting = {"ContainerCreating", "ErrImagePull"};
  JobLaunch job = Build(hosts);
  ASSERT_TRUE(job.critical);
  const HostLaunch& last = job.hosts[job.critical->host];
  EXPECT_EQ(last.host, "w-3");
  EXPECT_FALSE(job.critical->created_late);
  EXPECT_EQ(job.critical->phase, Phase::kContainer);
  EXPECT_EQ(job.critical->took_us, 62 * kSec);
  EXPECT_EQ(job.critical->median_us, 2 * kSec);
  ASSERT_FALSE(job.slowest.empty());
  EXPECT_EQ(job.hosts[job.slowest[0]].host, "w-3");
  EXPECT_THAT(last.waiting, SizeIs(2));
}

TEST(LaunchModelTest, CreatedLateIsItsOwnCause) {
  // An OrderedReady StatefulSet: each pod created after the previous one.
  std::vector<HostSpec> hosts;
  for (int i = 0; i < 4; ++i) {
    HostSpec h;
    h.host = "w-" + std::to_string(i);
    int64_t off = i * 10 * kSec;
    h.created = off;
    h.scheduled = off + 1 * kSec;
    h.container_started = off + 3 * kSec;
    h.running_seen = off + 3 * kSec + 100 * kMs;
    h.attempt = off + 3 * kSec + 400 * kMs;
    h.ssh_ready = off + 3 * kSec + 450 * kMs;
    h.started = off + 3 * kSec + 460 * kMs;
    hosts.push_back(h);
  }
  JobLaunch job = Build(hosts);
  ASSERT_TRUE(job.critical);
  EXPECT_EQ(job.hosts[job.critical->host].host, "w-3");
  EXPECT_TRUE(job.critical->created_late);
  EXPECT_EQ(job.critical->took_us, 30 * kSec);
}

TEST(LaunchModelTest, PodUpBeforeTheAgentAskedIsLauncherTime) {
  HostSpec early;  // Asked at once.
  HostSpec late;   // Asked 20 s after its container was up (tree spawn).
  late.host = "w-1";
  late.begin = 23 * kSec;
  late.running_seen = 23 * kSec + 20 * kMs;
  late.attempt = 23 * kSec + 30 * kMs;
  late.ssh_ready = 23 * kSec + 60 * kMs;
  late.started = 23 * kSec + 70 * kMs;
  late.on = "w-0";  // Tree spawn: w-0's orted launched w-1.
  JobLaunch job = Build({early, late});
  const HostLaunch& h = Find(job, "w-1");
  EXPECT_EQ(h.PhaseUs(Phase::kLauncher), 20 * kSec);
  EXPECT_EQ(h.PhaseUs(Phase::kSshd), 30 * kMs);
  EXPECT_EQ(h.launched_from, "w-0");
  ASSERT_TRUE(job.critical);
  EXPECT_EQ(job.critical->phase, Phase::kLauncher);
  ASSERT_EQ(job.critical->launched_by.size(), 1u);
  EXPECT_EQ(job.hosts[job.critical->launched_by[0]].host, "w-0");
}

TEST(LaunchModelTest, WholeSecondStampsAreBoundedByWhatTheAgentSaw) {
  // The container really started at 2.6 s; the API says 2 s (cut down).
  // The agent began at 2.49 s and saw the pod Pending at 2.5 s: the
  // container cannot have started before that, and no launcher time.
  HostSpec h;
  h.begin = 2490 * kMs;
  h.saw_pending = true;
  h.container_started = 2 * kSec;
  h.running_seen = 2600 * kMs;
  h.attempt = 2700 * kMs;
  h.ssh_ready = 2750 * kMs;
  h.started = 2760 * kMs;
  JobLaunch job = Build({h});
  const HostLaunch& host = job.hosts[0];
  EXPECT_FALSE(host.already_running);
  EXPECT_FALSE(host.HasPhase(Phase::kLauncher));
  EXPECT_EQ(*host.container_started, kBaseUs + 2500 * kMs);
  EXPECT_EQ(host.PhaseUs(Phase::kSshd), 200 * kMs);
}

TEST(LaunchModelTest, PodsUpLongBeforeTheLaunchAreCut) {
  // Workers created an hour ago; mpirun today: the job starts at begin.
  HostSpec h;
  h.created = -3600 * kSec;
  h.scheduled = -3599 * kSec;
  h.container_started = -3597 * kSec;
  h.running_seen = 20 * kMs;
  h.attempt = 30 * kMs;
  h.ssh_ready = 50 * kMs;
  h.started = 60 * kMs;
  JobLaunch job = Build({h});
  ASSERT_THAT(job.hosts, SizeIs(1));
  EXPECT_TRUE(job.hosts[0].already_running);
  EXPECT_EQ(job.t0_us, kBaseUs);
  EXPECT_FALSE(job.hosts[0].HasPhase(Phase::kScheduling));
  EXPECT_EQ(job.end_us - job.t0_us, 60 * kMs);
}

TEST(LaunchModelTest, FailedHostKeepsItsReasonAndPhase) {
  HostSpec ok;
  HostSpec bad;
  bad.host = "w-1";
  bad.container_started.reset();
  bad.waiting = {"ErrImagePull"};
  bad.failed = 4 * kSec;
  bad.failure =
      "pod default/w-1 is Pending: container main is waiting: "
      "ErrImagePull";
  JobLaunch job = Build({ok, bad});
  ASSERT_THAT(job.failed, SizeIs(1));
  const HostLaunch& h = job.hosts[job.failed[0]];
  EXPECT_EQ(h.host, "w-1");
  EXPECT_THAT(h.failure, HasSubstr("ErrImagePull"));
  EXPECT_FALSE(h.reached);
  ASSERT_FALSE(h.spans.empty());
  EXPECT_TRUE(h.spans.back().failed);
  EXPECT_EQ(h.spans.back().end_us, kBaseUs + 4 * kSec);
  EXPECT_EQ(job.reached, 1);
}

TEST(LaunchModelTest, NodeClockAheadIsSkewAndPlacedAtFirstSight) {
  HostSpec h;
  // The kubelet says the container started 5 s after the agent saw it.
  h.container_started = 8 * kSec;
  JobLaunch job = Build({h});
  const HostLaunch& host = job.hosts[0];
  ASSERT_TRUE(host.skew);
  EXPECT_EQ(host.skew->field, "container_started");
  EXPECT_EQ(host.skew->ahead_us, 8 * kSec - (3 * kSec + 100 * kMs));
  EXPECT_EQ(*host.container_started, kBaseUs + 3 * kSec + 100 * kMs);
  EXPECT_GE(host.PhaseUs(Phase::kSshd), 0);
  bool noted = false;
  for (const std::string& n : job.notes) {
    noted |= n.find("clock skew: w-0") != std::string::npos &&
             n.find("node node-a") != std::string::npos;
  }
  EXPECT_TRUE(noted);
}

TEST(LaunchModelTest, OlderTracesWithoutPodStatusStillReport) {
  // Lines as agents before pod_status wrote them.
  std::string text =
      R"({"host":"w-1","pod":"w-1","event":"resolved","t_mono_us":10,"t_wall_us":1000000,"pid":1})"
      "\n"
      R"({"host":"w-1","pod":"w-1","event":"pod_running","t_mono_us":20,"t_wall_us":1100000,"pid":1})"
      "\n"
      R"({"host":"w-1","pod":"w-1","event":"ssh_ready","t_mono_us":30,"t_wall_us":1500000,"pid":1})"
      "\n"
      R"({"host":"w-1","pod":"w-1","event":"started","t_mono_us":40,"t_wall_us":1510000,"pid":1})"
      "\n";
  TraceInput input;
  ASSERT_THAT(ParseTraceText(text, "old", &input), IsOk());
  auto job = BuildJobLaunch(input.records);
  ASSERT_THAT(job, IsOk());
  const HostLaunch& h = job->hosts[0];
  EXPECT_EQ(h.PhaseUs(Phase::kSshd), 400000);
  EXPECT_EQ(h.PhaseUs(Phase::kCommand), 10000);
  EXPECT_TRUE(h.reached);
}

TEST(LaunchModelTest, RepeatedRunsReportTheLast) {
  HostSpec first;
  HostSpec second;
  second.pid = 200;
  second.begin = 100 * kSec;
  second.created = 0;
  second.running_seen = 100 * kSec + 10 * kMs;
  second.attempt = 100 * kSec + 20 * kMs;
  second.ssh_ready = 100 * kSec + 40 * kMs;
  second.started = 100 * kSec + 50 * kMs;
  JobLaunch job = Build({first, second});
  ASSERT_THAT(job.hosts, SizeIs(1));
  EXPECT_EQ(job.hosts[0].pid, 200);
  EXPECT_EQ(job.hosts[0].launches, 2);
  ASSERT_FALSE(job.notes.empty());
  EXPECT_THAT(job.notes[0], HasSubstr("2 agent runs"));
}

TEST(LaunchModelTest, SortsByStartThenNaturalName) {
  std::vector<HostSpec> hosts;
  for (const char* name : {"w-10", "w-2", "w-1"}) {
    HostSpec h;
    h.host = name;
    hosts.push_back(h);
  }
  JobLaunch job = Build(hosts);
  ASSERT_THAT(job.hosts, SizeIs(3));
  EXPECT_EQ(job.hosts[0].host, "w-1");
  EXPECT_EQ(job.hosts[1].host, "w-2");
  EXPECT_EQ(job.hosts[2].host, "w-10");
}

TEST(LaunchModelTest, ThousandHostsComplete) {
  // Scale check only: timing belongs in bench/ (bench/report_bench.sh).
  std::vector<HostSpec> hosts;
  for (int i = 0; i < 1000; ++i) {
    HostSpec h;
    h.host = "w-" + std::to_string(i);
    h.pid = 1000 + i;
    int64_t jitter = (i * 7919 % 1000) * kMs;
    h.running_seen += jitter;
    *h.attempt += jitter;
    *h.ssh_ready += jitter;
    *h.started += jitter;
    hosts.push_back(h);
  }
  JobLaunch job = Build(hosts);
  EXPECT_THAT(job.hosts, SizeIs(1000));
  EXPECT_EQ(job.reached, 1000);
  ASSERT_THAT(job.slowest, SizeIs(5));
}

TEST(LaunchModelTest, HostsThatBeganTogetherSortInNaturalOrder) {
  std::vector<HostSpec> hosts(3);
  hosts[0].host = "w-10";
  hosts[1].host = "w-2";
  hosts[2].host = "w-01";
  JobLaunch job = Build(hosts);
  ASSERT_THAT(job.hosts, SizeIs(3));
  EXPECT_EQ(job.hosts[0].host, "w-01");
  EXPECT_EQ(job.hosts[1].host, "w-2");
  EXPECT_EQ(job.hosts[2].host, "w-10");
}

}  // namespace
}  // namespace k8s_agent::report
