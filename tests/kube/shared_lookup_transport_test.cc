// SPDX-License-Identifier: Apache-2.0
// SharedLookupTransport and its PodListCache: which lookups one namespace
// list answers, who lists, and everything that goes to the API server.

#include "plugin/kube/shared_lookup_transport.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "plugin/kube/kube_client.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_http_transport.h"

namespace k8s_agent::kube {
namespace {

using ::testing::HasSubstr;

std::string PodJson(const std::string& name, const std::string& phase,
                    const std::string& ip) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ns","uid":"u-)" +
         name + R"(","resourceVersion":"5"},"status":{"phase":")" + phase +
         R"(","podIP":")" + ip + R"("}})";
}

std::string ListJson(const std::string& rv, const std::string& items,
                     const std::string& cont = "") {
  return R"({"kind":"PodList","metadata":{"resourceVersion":")" + rv +
         R"(","continue":")" + cont + R"("},"items":[)" + items + "]}";
}

// One agent: its own shared transport over its own fake API server, the
// cache directory shared with the others, as separate processes share it.
struct Agent {
  Agent(const std::string& dir, int64_t* wall, FakeClock* clock)
      : shared(
            &server,
            [dir, wall](const std::string& ns) {
              return std::make_unique<PodListCache>(dir, "key-" + ns,
                                                    std::chrono::seconds(5),
                                                    [wall] { return *wall; });
            },
            clock),
        client(&shared, ClusterConfig()) {}

  // Looks `name` up as PodResolver does; the answer lands in `result`.
  void Lookup(const std::string& name) {
    ListOptions options;
    options.field_selector = "metadata.name=" + name;
    options.resource_version = "0";
    call = client.ListPods(
        "ns", options, [this](StatusOr<PodList> l) { result = std::move(l); });
  }

  FakeHttpTransport server;
  SharedLookupTransport shared;
  KubeClient client;
  ApiCall call;
  std::optional<StatusOr<PodList>> result;
};

class SharedLookupTransportTest : public ::testing::Test {
 protected:
  SharedLookupTransportTest() {
    char tmpl[] = "/tmp/k8s-shared-list-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  ~SharedLookupTransportTest() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Agent> NewAgent() {
    return std::make_unique<Agent>(dir_ + "/pods", &wall_, &clock_);
  }
  // The loop's next turn for `a`.
  void Turn(Agent* a) { a->shared.OnTimer(clock_.Now()); }

  std::string dir_;
  FakeClock clock_;
  int64_t wall_ = 1'700'000'000'000;
};

TEST_F(SharedLookupTransportTest, OnlyTheNameLookupIsTakenIn) {
  std::string ns;
  HttpRequest r;
  r.path =
      "/api/v1/namespaces/ns/pods?fieldSelector=metadata.name%3Dw-0"
      "&resourceVersion=0";
  EXPECT_EQ(SharedLookupTransport::NameLookup(r, &ns), "w-0");
  EXPECT_EQ(ns, "ns");
  // A quorum read, a watch, a label list, another resource: untouched.
  for (const char* path :
       {"/api/v1/namespaces/ns/pods?fieldSelector=metadata.name%3Dw-0",
        "/api/v1/namespaces/ns/pods?labelSelector=a%3Db&resourceVersion=0",
        "/api/v1/namespaces/ns/pods?fieldSelector=metadata.name%3Dw%2F0"
        "&resourceVersion=0",
        "/api/v1/namespaces/ns/services?fieldSelector=metadata.name%3Dw"
        "&resourceVersion=0"}) {
    r.path = path;
    EXPECT_EQ(SharedLookupTransport::NameLookup(r, &ns), "") << path;
  }
  r.path =
      "/api/v1/namespaces/ns/pods?fieldSelector=metadata.name%3Dw-0"
      "&resourceVersion=0";
  r.streaming = true;
  EXPECT_EQ(SharedLookupTransport::NameLookup(r, &ns), "");
}

TEST_F(SharedLookupTransportTest, FirstAgentListsOnceAndTheOthersReadIt) {
  auto first = NewAgent();
  auto second = NewAgent();
  first->Lookup("w-0");
  second->Lookup("w-1");
  EXPECT_EQ(first->server.size(), 0u);  // Nothing before the loop turns.
  Turn(first.get());
  ASSERT_EQ(first->server.size(), 1u);
  EXPECT_EQ(first->server.last().path,
            "/api/v1/namespaces/ns/pods?limit=500&resourceVersion=0");
  // The second finds the lock held and looks again on a timer.
  Turn(second.get());
  EXPECT_EQ(second->server.size(), 0u);
  EXPECT_EQ(second->shared.NextWake(), clock_.Now() + kSharedListRetry);

  first->server.Respond(
      0, 200,
      ListJson("42", PodJson("w-0", "Running", "10.0.0.2") + "," +
                         PodJson("w-1", "Pending", "")));
  Turn(first.get());
  ASSERT_TRUE(first->result && first->result->ok());
  ASSERT_EQ((*first->result)->items.size(), 1u);
  EXPECT_EQ((*first->result)->items[0].pod_ip, "10.0.0.2");
  EXPECT_EQ((*first->result)->resource_version, "42");

  clock_.Advance(kSharedListRetry);
  Turn(second.get());
  ASSERT_TRUE(second->result && second->result->ok());
  ASSERT_EQ((*second->result)->items.size(), 1u);
  // A pending pod is answered too: the agent watches it from the list's
  // version, as after its own lookup.
  EXPECT_EQ((*second->result)->items[0].phase, "Pending");
  EXPECT_EQ((*second->result)->resource_version, "42");
  EXPECT_EQ(second->server.size(), 0u);
  EXPECT_EQ(first->shared.lists(), 1);
  EXPECT_EQ(second->shared.answered(), 1);
}

TEST_F(SharedLookupTransportTest, PagesAreFollowedFromTheFirstPagesVersion) {
  auto a = NewAgent();
  a->Lookup("w-1");
  Turn(a.get());
  a->server.Respond(
      0, 200, ListJson("42", PodJson("w-0", "Running", "10.0.0.2"), "tok/en="));
  ASSERT_EQ(a->server.size(), 2u);
  EXPECT_EQ(a->server.last().path,
            "/api/v1/namespaces/ns/pods?limit=500&continue=tok%2Fen%3D");
  a->server.Respond(1, 200,
                    ListJson("43", PodJson("w-1", "Running", "10.0.0.3")));
  Turn(a.get());
  ASSERT_TRUE(a->result && a->result->ok());
  EXPECT_EQ((*a->result)->items.at(0).name, "w-1");
  EXPECT_EQ((*a->result)->resource_version, "42");
}

TEST_F(SharedLookupTransportTest, APodNotInAFreshListAsksTheServer) {
  auto first = NewAgent();
  first->Lookup("w-0");
  Turn(first.get());
  first->server.Respond(0, 200,
                        ListJson("42", PodJson("w-0", "Running", "10.0.0.2")));
  Turn(first.get());
  auto late = NewAgent();
  late->Lookup("w-9");  // Created after the list: not in it.
  Turn(late.get());
  ASSERT_EQ(late->server.size(), 1u);
  EXPECT_THAT(late->server.last().path, HasSubstr("metadata.name%3Dw-9"));
  late->server.Respond(0, 200,
                       ListJson("50", PodJson("w-9", "Running", "10.0.0.9")));
  ASSERT_TRUE(late->result && late->result->ok());
  EXPECT_EQ((*late->result)->items.at(0).pod_ip, "10.0.0.9");
}

TEST_F(SharedLookupTransportTest, AnOldListIsListedAgain) {
  auto first = NewAgent();
  first->Lookup("w-0");
  Turn(first.get());
  first->server.Respond(0, 200, ListJson("42", PodJson("w-0", "Pending", "")));
  Turn(first.get());
  wall_ += 5001;  // Past the 5 s max age.
  auto later = NewAgent();
  later->Lookup("w-0");
  Turn(later.get());
  ASSERT_EQ(later->server.size(), 1u);
  EXPECT_THAT(later->server.last().path, HasSubstr("limit=500"));
  later->server.Respond(0, 200,
                        ListJson("60", PodJson("w-0", "Running", "10.0.0.2")));
  Turn(later.get());
  ASSERT_TRUE(later->result && later->result->ok());
  EXPECT_EQ((*later->result)->items.at(0).phase, "Running");
  EXPECT_EQ((*later->result)->resource_version, "60");
}

TEST_F(SharedLookupTransportTest, AFailedListSendsEveryLookupToTheServer) {
  auto first = NewAgent();
  auto second = NewAgent();
  first->Lookup("w-0");
  second->Lookup("w-1");
  Turn(first.get());
  Turn(second.get());
  first->server.Respond(0, 403, R"({"kind":"Status","code":403})");
  Turn(first.get());
  // The lister's own lookup goes to the server, whose answer the agent's
  // retry policy judges (here: forbidden, at once).
  ASSERT_EQ(first->server.size(), 2u);
  EXPECT_THAT(first->server.last().path, HasSubstr("metadata.name%3Dw-0"));
  first->server.Respond(1, 403, R"({"kind":"Status","code":403})");
  ASSERT_TRUE(first->result);
  EXPECT_EQ(first->result->status().code(), Code::kPermissionDenied);
  // The others do not list again while the failure is younger than 5 s.
  clock_.Advance(kSharedListRetry);
  Turn(second.get());
  ASSERT_EQ(second->server.size(), 1u);
  EXPECT_THAT(second->server.last().path, HasSubstr("metadata.name%3Dw-1"));
}

TEST_F(SharedLookupTransportTest, AListerThatNeverFinishesIsWaitedOutOnce) {
  auto first = NewAgent();
  first->Lookup("w-0");
  Turn(first.get());  // Lists, and never hears back.
  auto second = NewAgent();
  second->Lookup("w-1");
  Turn(second.get());
  EXPECT_EQ(second->server.size(), 0u);
  clock_.Advance(kSharedListPatience);
  Turn(second.get());
  ASSERT_EQ(second->server.size(), 1u);
  EXPECT_THAT(second->server.last().path, HasSubstr("metadata.name%3Dw-1"));
}

TEST_F(SharedLookupTransportTest, CancellingALookupStopsItsAnswer) {
  auto a = NewAgent();
  a->Lookup("w-0");
  a->call.reset();
  Turn(a.get());
  EXPECT_EQ(a->server.size(), 0u);
  EXPECT_EQ(a->shared.NextWake(), TimePoint::max());
  EXPECT_FALSE(a->result);
}

TEST_F(SharedLookupTransportTest, OtherRequestsPassThrough) {
  auto a = NewAgent();
  ListOptions options;
  options.label_selector = "app=w";
  ApiCall call = a->client.ListPods("ns", options, [](StatusOr<PodList>) {});
  ASSERT_EQ(a->server.size(), 1u);  // At once, not on the loop's turn.
  EXPECT_THAT(a->server.last().path, HasSubstr("labelSelector=app%3Dw"));
}

TEST_F(SharedLookupTransportTest, ADirectoryOthersCanWriteIsNotUsed) {
  ASSERT_EQ(::mkdir((dir_ + "/pods").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((dir_ + "/pods/key-ns").c_str(), 0777), 0);
  ASSERT_EQ(::chmod((dir_ + "/pods/key-ns").c_str(), 0777), 0);
  // A planted symlink instead of the directory is refused outright.
  ASSERT_EQ(::mkdir((dir_ + "/elsewhere").c_str(), 0700), 0);
  ASSERT_EQ(::symlink((dir_ + "/elsewhere").c_str(),
                      (dir_ + "/pods/key-other").c_str()),
            0);
  PodListCache planted(dir_ + "/pods", "key-other", std::chrono::seconds(5),
                       [this] { return wall_; });
  EXPECT_FALSE(planted.shared());
  // A group- or world-writable one of ours is narrowed to 0700 first.
  PodListCache widened(dir_ + "/pods", "key-ns", std::chrono::seconds(5),
                       [this] { return wall_; });
  EXPECT_TRUE(widened.shared());
  struct stat st;
  ASSERT_EQ(::stat((dir_ + "/pods/key-ns").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(SharedLookupTransportTest, AFileOthersCanReadIsNotBelieved) {
  PodListCache writer(dir_ + "/pods", "k", std::chrono::seconds(5),
                      [this] { return wall_; });
  ASSERT_EQ(writer.TryLock(), PodListCache::Lock::kHeld);
  ASSERT_TRUE(
      writer.Store({{"w-0", PodJson("w-0", "Running", "10.0.0.2")}}, "7").ok());
  writer.Release();
  PodListCache reader(dir_ + "/pods", "k", std::chrono::seconds(5),
                      [this] { return wall_; });
  ASSERT_TRUE(reader.shared());
  ASSERT_TRUE(reader.Find("w-0"));
  ASSERT_EQ(::chmod((dir_ + "/pods/k/pod.w-0").c_str(), 0644), 0);
  EXPECT_FALSE(reader.Find("w-0"));
  EXPECT_FALSE(reader.Find("../k/pod.w-0"));
}

TEST_F(SharedLookupTransportTest, ANewListDropsThePodsItNoLongerHas) {
  PodListCache c(dir_ + "/pods", "k", std::chrono::seconds(5),
                 [this] { return wall_; });
  ASSERT_EQ(c.TryLock(), PodListCache::Lock::kHeld);
  ASSERT_TRUE(c.Store({{"w-0", PodJson("w-0", "Running", "10.0.0.2")},
                       {"w-1", PodJson("w-1", "Running", "10.0.0.3")}},
                      "7")
                  .ok());
  c.Release();
  wall_ += 6000;
  ASSERT_EQ(c.TryLock(), PodListCache::Lock::kHeld);
  ASSERT_TRUE(
      c.Store({{"w-1", PodJson("w-1", "Running", "10.0.0.3")}}, "9").ok());
  c.Release();
  EXPECT_FALSE(c.Find("w-0"));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/pods/k/pod.w-0"));
  ASSERT_TRUE(c.Find("w-1"));
  EXPECT_EQ(c.Find("w-1")->rv, "9");
}

TEST_F(SharedLookupTransportTest, TwoListersNeverHoldTheLockAtOnce) {
  PodListCache a(dir_ + "/pods", "k", std::chrono::seconds(5),
                 [this] { return wall_; });
  PodListCache b(dir_ + "/pods", "k", std::chrono::seconds(5),
                 [this] { return wall_; });
  ASSERT_EQ(a.TryLock(), PodListCache::Lock::kHeld);
  EXPECT_EQ(b.TryLock(), PodListCache::Lock::kBusy);
  a.Release();
  EXPECT_EQ(b.TryLock(), PodListCache::Lock::kHeld);
}

}  // namespace
}  // namespace k8s_agent::kube
