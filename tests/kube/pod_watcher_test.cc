// SPDX-License-Identifier: Apache-2.0
// PodWatcher: the reflector rules, asserted as sequences of requests.

#include "plugin/kube/pod_watcher.h"

#include <functional>
#include <memory>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugin/base/strings.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_http_transport.h"
#include "tests/fakes/fake_pods.h"
#include "tests/fakes/log_capture.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent::kube {
namespace {

using State = PodWatcher::State;

// Pod "w0" as the watcher sees it: only its uid, version and phase vary.
std::string PodJson(const std::string& uid, const std::string& rv,
                    const std::string& phase) {
  FakePod p;
  p.name = "w0";
  p.uid = uid;
  p.rv = rv;
  p.phase = phase;
  return kube::PodJson(p).dump();
}

std::string Line(const std::string& type, const std::string& object) {
  return R"({"type":")" + type + R"(","object":)" + object + "}\n";
}

std::string Bookmark(const std::string& rv) {
  return Line("BOOKMARK", R"({"kind":"Pod","metadata":{"resourceVersion":")" +
                              rv + R"("}})");
}

std::string StatusBody(int code, const std::string& reason) {
  return R"({"kind":"Status","status":"Failure","message":"m","reason":")" +
         reason + R"(","code":)" + std::to_string(code) + "}";
}

bool IsWatch(const HttpRequest& r) { return QueryParam(r, "watch") == "true"; }

class PodWatcherTest : public ::testing::Test {
 protected:
  PodWatcherTest()
      : client_(&transport_, ClusterConfig{}),
        watcher_(
            &client_, &clock_, "default", "w0", [this] { ++changes_; }, 42) {}

  Pod RunningPod(const std::string& rv) {
    auto pod = Pod::FromJson(PodJson("uid-1", rv, "Running"));
    return *pod;
  }
  // Plays the loop: fire the watcher's timer if it is due.
  void Tick() {
    if (watcher_.NextWake() <= clock_.Now()) watcher_.OnTimer(clock_.Now());
  }
  void StartWatchingAt(const std::string& rv) {
    watcher_.Start(RunningPod(rv), rv, clock_.Now());
    ASSERT_EQ(transport_.size(), 1u);
    ASSERT_TRUE(IsWatch(transport_.last()));
    transport_.Headers(0, 200);
  }
  // Asserts the last request is a WATCH from `rv` and opens it.
  void ExpectWatchFrom(const std::string& rv) {
    const HttpRequest& r = transport_.last();
    EXPECT_TRUE(IsWatch(r)) << r.path;
    EXPECT_EQ(QueryParam(r, "resourceVersion"), rv) << r.path;
    EXPECT_EQ(QueryParam(r, "fieldSelector"), "metadata.name%3Dw0");
    EXPECT_EQ(QueryParam(r, "allowWatchBookmarks"), "true");
    EXPECT_EQ(watcher_.state(), State::kWatching);
  }

  FakeClock clock_;
  FakeHttpTransport transport_;
  KubeClient client_;
  int changes_ = 0;
  PodWatcher watcher_;
};

TEST_F(PodWatcherTest, EmptyRvListsThenWatchesFromListRv) {
  watcher_.Start(std::nullopt, "", clock_.Now());
  ASSERT_EQ(transport_.size(), 1u);
  EXPECT_FALSE(IsWatch(transport_.request(0)));
  EXPECT_EQ(watcher_.state(), State::kListing);
  EXPECT_EQ(QueryParam(transport_.request(0), "fieldSelector"),
            "metadata.name%3Dw0");
  // From the watch cache: no quorum read per waiting host.
  EXPECT_EQ(QueryParam(transport_.request(0), "resourceVersion"), "0");
  transport_.Respond(0, 200,
                     R"({"metadata":{"resourceVersion":"100"},"items":[)" +
                         PodJson("uid-1", "90", "Pending") + "]}");
  ASSERT_EQ(transport_.size(), 2u);
  ExpectWatchFrom("100");
  ASSERT_TRUE(watcher_.pod().has_value());
  EXPECT_EQ(watcher_.pod()->phase, "Pending");
  EXPECT_EQ(changes_, 1);
  EXPECT_EQ(watcher_.lists_started(), 1);
}

TEST_F(PodWatcherTest, TimeoutSecondsRandomisedInRange) {
  for (int i = 0; i < 20; ++i) {
    watcher_.Start(std::nullopt, "5", clock_.Now());
    int t = *ParseInt(QueryParam(transport_.last(), "timeoutSeconds"));
    EXPECT_GE(t, 300);
    EXPECT_LT(t, 600);
    EXPECT_GT(transport_.last().idle_timeout_ms, t * 1000);
  }
}

TEST_F(PodWatcherTest, WatchPingsAtAThirdOfTheIdleLimit) {
  // The default 90 s idle limit gives client-go's HTTP/2 health check:
  // a PING after 30 s with nothing read, dead 15 s later.
  watcher_.Start(std::nullopt, "5", clock_.Now());
  EXPECT_EQ(transport_.last().ping_after_ms, 30000);
  EXPECT_EQ(transport_.last().ping_timeout_ms, 15000);
  watcher_.Stop();
  watcher_.set_watch_idle_timeout(std::chrono::seconds(6));
  watcher_.Start(std::nullopt, "5", clock_.Now());
  EXPECT_EQ(transport_.last().ping_after_ms, 2000);
  EXPECT_EQ(transport_.last().ping_timeout_ms, 1000);
}

TEST_F(PodWatcherTest, ResumeAfterCleanEndFromLastRv) {
  StartWatchingAt("5");
  transport_.Data(0, Line("MODIFIED", PodJson("uid-1", "6", "Running")));
  EXPECT_EQ(changes_, 1);
  clock_.Advance(seconds(400));
  transport_.Done(0);  // The server's timeoutSeconds passed.
  ASSERT_EQ(transport_.size(), 2u);
  ExpectWatchFrom("6");
  EXPECT_EQ(watcher_.lists_started(), 0);
  EXPECT_EQ(watcher_.watches_started(), 2);
}

TEST_F(PodWatcherTest, ExpiredInStreamRelistsThenWatchesFromListRv) {
  StartWatchingAt("5");
  transport_.Data(0, Line("ERROR", StatusBody(410, "Expired")));
  ASSERT_EQ(transport_.size(), 2u);
  EXPECT_TRUE(transport_.cancelled(0));
  EXPECT_FALSE(IsWatch(transport_.request(1)));
  EXPECT_EQ(QueryParam(transport_.request(1), "resourceVersion"), "0");
  EXPECT_EQ(watcher_.state(), State::kListing);
  transport_.Respond(1, 200,
                     R"({"metadata":{"resourceVersion":"200"},"items":[)" +
                         PodJson("uid-1", "150", "Running") + "]}");
  ASSERT_EQ(transport_.size(), 3u);
  ExpectWatchFrom("200");
  EXPECT_EQ(watcher_.lists_started(), 1);
}

TEST_F(PodWatcherTest, ExpiredRightAfterListBacksOffBeforeRelisting) {
  watcher_.Start(std::nullopt, "", clock_.Now());
  transport_.Respond(0, 200,
                     R"({"metadata":{"resourceVersion":"100"},"items":[]})");
  ASSERT_EQ(transport_.size(), 2u);
  transport_.Headers(1, 200);
  transport_.Data(1, Line("ERROR", StatusBody(410, "Expired")));
  // No tight list/410 loop: wait, then list again.
  EXPECT_EQ(transport_.size(), 2u);
  EXPECT_EQ(watcher_.state(), State::kBackingOff);
  clock_.Advance(seconds(1));
  Tick();
  ASSERT_EQ(transport_.size(), 3u);
  EXPECT_FALSE(IsWatch(transport_.last()));
  EXPECT_EQ(watcher_.lists_started(), 2);
}

TEST_F(PodWatcherTest, ExpiredHttpStatusRelists) {
  watcher_.Start(RunningPod("5"), "5", clock_.Now());
  transport_.Respond(0, 410, StatusBody(410, "Expired"));
  ASSERT_EQ(transport_.size(), 2u);
  EXPECT_FALSE(IsWatch(transport_.request(1)));
  EXPECT_EQ(watcher_.state(), State::kListing);
}

TEST_F(PodWatcherTest, TooManyRequestsWaitsRetryAfterThenSameRvNoRelist) {
  watcher_.Start(RunningPod("5"), "5", clock_.Now());
  transport_.Respond(0, 429, StatusBody(429, "TooManyRequests"),
                     {{"retry-after", "7"}});
  EXPECT_EQ(watcher_.state(), State::kBackingOff);
  // Retry-After, plus up to one backoff step (800 ms) of jitter.
  Duration delay = watcher_.NextWake() - clock_.Now();
  EXPECT_GE(delay, seconds(7));
  EXPECT_LE(delay, seconds(7) + milliseconds(800));
  clock_.Advance(seconds(7) - milliseconds(1));
  Tick();
  EXPECT_EQ(transport_.size(), 1u);
  clock_.Advance(delay - seconds(7) + milliseconds(1));
  Tick();
  ASSERT_EQ(transport_.size(), 2u);
  ExpectWatchFrom("5");
  EXPECT_EQ(watcher_.lists_started(), 0);
}

TEST_F(PodWatcherTest, ServerErrorBacksOffWithJitterThenSameRv) {
  watcher_.Start(RunningPod("5"), "5", clock_.Now());
  transport_.Respond(0, 503, "unavailable");
  EXPECT_EQ(watcher_.state(), State::kBackingOff);
  Duration delay = watcher_.NextWake() - clock_.Now();
  EXPECT_GE(delay, milliseconds(400));
  EXPECT_LE(delay, milliseconds(800));
  Tick();
  EXPECT_EQ(transport_.size(), 1u);
  clock_.Advance(delay);
  Tick();
  ASSERT_EQ(transport_.size(), 2u);
  ExpectWatchFrom("5");
  // A second failure doubles the ceiling.
  transport_.Done(1, UnavailableError("Connection refused"));
  Duration second = watcher_.NextWake() - clock_.Now();
  EXPECT_GE(second, milliseconds(800));
  EXPECT_LE(second, milliseconds(1600));
  EXPECT_EQ(watcher_.lists_started(), 0);
}

TEST_F(PodWatcherTest, VeryShortEmptyWatchBacksOff) {
  StartWatchingAt("5");
  clock_.Advance(milliseconds(100));
  transport_.Done(0);
  EXPECT_EQ(watcher_.state(), State::kBackingOff);
  EXPECT_EQ(transport_.size(), 1u);
  clock_.Advance(seconds(1));
  Tick();
  ASSERT_EQ(transport_.size(), 2u);
  ExpectWatchFrom("5");
}

TEST_F(PodWatcherTest, LongEmptyWatchResumesAtOnce) {
  StartWatchingAt("5");
  clock_.Advance(seconds(2));
  transport_.Done(0);
  ASSERT_EQ(transport_.size(), 2u);
  ExpectWatchFrom("5");
}

TEST_F(PodWatcherTest, BookmarkMovesRvOnly) {
  StartWatchingAt("5");
  transport_.Data(0, Bookmark("99"));
  EXPECT_EQ(changes_, 0);
  EXPECT_EQ(watcher_.pod()->resource_version, "5");
  clock_.Advance(milliseconds(100));  // Short, but had an event: not an error.
  transport_.Done(0);
  ASSERT_EQ(transport_.size(), 2u);
  ExpectWatchFrom("99");
}

TEST_F(PodWatcherTest, EndlessBookmarksInOneWatchStayBounded) {
  StartWatchingAt("5");
  std::string chunk;
  for (int i = 0; i < 1000; ++i) chunk += Bookmark(std::to_string(100 + i));
  for (int round = 0; round < 100; ++round) transport_.Data(0, chunk);
  // 100000 bookmarks: no request, no notification, nothing buffered.
  EXPECT_EQ(transport_.size(), 1u);
  EXPECT_EQ(changes_, 0);
  EXPECT_EQ(watcher_.state(), State::kWatching);
  EXPECT_EQ(watcher_.pod()->resource_version, "5");
  clock_.Advance(seconds(2));
  transport_.Done(0);
  ExpectWatchFrom("1099");
}

TEST_F(PodWatcherTest, ShortWatchWithOnlyAStaleBookmarkBacksOff) {
  // A server answering each watch with a bookmark at the RV we already
  // hold and closing at once: no progress, so no tight re-watch loop.
  StartWatchingAt("5");
  transport_.Data(0, Bookmark("5"));
  clock_.Advance(milliseconds(100));
  transport_.Done(0);
  EXPECT_EQ(watcher_.state(), State::kBackingOff);
  EXPECT_EQ(transport_.size(), 1u);
  clock_.Advance(seconds(1));
  Tick();
  ASSERT_EQ(transport_.size(), 2u);
  ExpectWatchFrom("5");
}

TEST_F(PodWatcherTest, UnauthorizedReloadsTokenOnceThenFails) {
  watcher_.Start(RunningPod("5"), "5", clock_.Now());
  transport_.Respond(0, 401, StatusBody(401, "Unauthorized"));
  EXPECT_EQ(transport_.token_invalidations(), 1);
  ASSERT_EQ(transport_.size(), 2u);
  ExpectWatchFrom("5");
  transport_.Respond(1, 401, StatusBody(401, "Unauthorized"));
  EXPECT_EQ(transport_.size(), 2u);
  EXPECT_EQ(watcher_.state(), State::kFailed);
  EXPECT_THAT(watcher_.error(), StatusIs(Code::kUnauthenticated));
  EXPECT_EQ(changes_, 1);  // The consumer learns about the failure.
}

TEST_F(PodWatcherTest, UnauthorizedAfterReloadSucceedsKeepsWatching) {
  watcher_.Start(RunningPod("5"), "5", clock_.Now());
  transport_.Respond(0, 401, StatusBody(401, "Unauthorized"));
  transport_.Headers(1, 200);
  transport_.Data(1, Line("MODIFIED", PodJson("uid-1", "6", "Running")));
  // A later rotation gets its own reload.
  transport_.Done(1, OkStatus());
  ASSERT_EQ(transport_.size(), 3u);
  transport_.Respond(2, 401, StatusBody(401, "Unauthorized"));
  EXPECT_EQ(transport_.token_invalidations(), 2);
  ExpectWatchFrom("6");
}

TEST_F(PodWatcherTest, ForbiddenIsRetriedBrieflyThenFails) {
  // Given a watch answered 403 every time, expect a few quick re-watches
  // from the same RV (RBAC warming up), then kFailed naming the Role.
  watcher_.Start(RunningPod("5"), "5", clock_.Now());
  TimePoint t0 = clock_.Now();
  size_t i = 0;
  while (watcher_.state() != State::kFailed && i < 50) {
    ExpectWatchFrom("5");
    transport_.Respond(i++, 403, StatusBody(403, "Forbidden"));
    if (watcher_.state() == State::kBackingOff) {
      EXPECT_LE(watcher_.NextWake() - clock_.Now(), seconds(1));
      clock_.Advance(watcher_.NextWake() - clock_.Now());
      Tick();
    }
  }
  EXPECT_EQ(watcher_.state(), State::kFailed);
  EXPECT_GE(transport_.size(), 4u);
  EXPECT_LE(clock_.Now() - t0, ApiRetryPolicy::kForbiddenWindow);
  EXPECT_THAT(watcher_.error(), StatusIs(Code::kPermissionDenied, "role.yaml"));
  EXPECT_EQ(watcher_.NextWake(), TimePoint::max());
  EXPECT_EQ(watcher_.lists_started(), 0);
}

TEST_F(PodWatcherTest, ForbiddenOnceThenAllowedKeepsWatching) {
  // Given one 403 (an API server just started), expect the re-watch to
  // carry on as if nothing happened.
  watcher_.Start(RunningPod("5"), "5", clock_.Now());
  transport_.Respond(0, 403, StatusBody(403, "Forbidden"));
  EXPECT_EQ(watcher_.state(), State::kBackingOff);
  clock_.Advance(watcher_.NextWake() - clock_.Now());
  Tick();
  ASSERT_EQ(transport_.size(), 2u);
  ExpectWatchFrom("5");
  transport_.Headers(1, 200);
  transport_.Data(1, Line("MODIFIED", PodJson("uid-1", "6", "Running")));
  EXPECT_EQ(watcher_.state(), State::kWatching);
}

TEST_F(PodWatcherTest, ExpiredAfterACachedListFallsBackToAQuorumList) {
  // Given a watch from a cached list's RV that still gets 410, expect a
  // backoff, then a list without resourceVersion (etcd), then cached again.
  StartWatchingAt("5");
  transport_.Data(0, Line("ERROR", StatusBody(410, "Expired")));
  ASSERT_EQ(transport_.size(), 2u);
  EXPECT_EQ(QueryParam(transport_.request(1), "resourceVersion"), "0");
  transport_.Respond(1, 200,
                     R"({"metadata":{"resourceVersion":"90"},"items":[)" +
                         PodJson("uid-1", "50", "Running") + "]}");
  ASSERT_EQ(transport_.size(), 3u);
  ExpectWatchFrom("90");
  transport_.Headers(2, 200);
  transport_.Data(2, Line("ERROR", StatusBody(410, "Expired")));
  EXPECT_EQ(watcher_.state(), State::kBackingOff);
  EXPECT_EQ(transport_.size(), 3u);
  clock_.Advance(watcher_.NextWake() - clock_.Now());
  Tick();
  ASSERT_EQ(transport_.size(), 4u);
  EXPECT_FALSE(IsWatch(transport_.request(3)));
  EXPECT_EQ(QueryParam(transport_.request(3), "resourceVersion"), "");
  transport_.Respond(3, 200,
                     R"({"metadata":{"resourceVersion":"120"},"items":[)" +
                         PodJson("uid-1", "50", "Running") + "]}");
  ExpectWatchFrom("120");
  transport_.Headers(4, 200);
  transport_.Data(4, Line("MODIFIED", PodJson("uid-1", "121", "Running")));
  transport_.Data(4, Line("ERROR", StatusBody(410, "Expired")));
  ASSERT_EQ(transport_.size(), 6u);
  EXPECT_EQ(QueryParam(transport_.request(5), "resourceVersion"), "0");
}

TEST_F(PodWatcherTest, MalformedWatchEventFailsInsteadOfLooping) {
  // Given a watch event that is not JSON, expect kFailed (a server that
  // sends garbage keeps sending it), as a lookup would fail.
  StartWatchingAt("5");
  transport_.Data(0, "{not json\n");
  transport_.Data(0, "\n");
  EXPECT_EQ(watcher_.state(), State::kFailed);
  EXPECT_THAT(watcher_.error(), StatusIs(Code::kInternal));
  EXPECT_EQ(transport_.size(), 1u);
}

TEST_F(PodWatcherTest, TlsErrorFails) {
  watcher_.Start(RunningPod("5"), "5", clock_.Now());
  transport_.Done(0,
                  FailedPreconditionError("x509: certificate verify failed"));
  EXPECT_EQ(watcher_.state(), State::kFailed);
  EXPECT_THAT(watcher_.error(), StatusIs(Code::kFailedPrecondition, "x509"));
}

TEST_F(PodWatcherTest, DeletedThenReplacedByNewUid) {
  StartWatchingAt("5");
  transport_.Data(0, Line("DELETED", PodJson("uid-1", "6", "Running")));
  EXPECT_FALSE(watcher_.pod().has_value());
  EXPECT_TRUE(watcher_.deleted());
  EXPECT_EQ(changes_, 1);
  transport_.Data(0, Line("ADDED", PodJson("uid-2", "7", "Pending")));
  ASSERT_TRUE(watcher_.pod().has_value());
  EXPECT_EQ(watcher_.pod()->uid, "uid-2");
  EXPECT_EQ(watcher_.pod()->phase, "Pending");
  EXPECT_FALSE(watcher_.deleted());
  EXPECT_EQ(changes_, 2);
}

TEST_F(PodWatcherTest, StopCancelsAndGoesIdle) {
  StartWatchingAt("5");
  watcher_.Stop();
  EXPECT_TRUE(transport_.cancelled(0));
  EXPECT_EQ(watcher_.state(), State::kIdle);
  EXPECT_EQ(watcher_.NextWake(), TimePoint::max());
}

TEST_F(PodWatcherTest, OnChangeMayStopTheWatcher) {
  std::unique_ptr<PodWatcher> w;
  w = std::make_unique<PodWatcher>(
      &client_, &clock_, "default", "w0", [&] { w->Stop(); }, 4);
  w->Start(RunningPod("5"), "5", clock_.Now());
  transport_.Headers(0, 200);
  transport_.Data(0, Line("MODIFIED", PodJson("uid-1", "6", "Running")) +
                         Line("MODIFIED", PodJson("uid-1", "7", "Running")));
  EXPECT_EQ(w->state(), State::kIdle);
  EXPECT_TRUE(transport_.cancelled(0));
  EXPECT_EQ(w->pod()->resource_version, "6");  // Nothing after Stop().
}

TEST_F(PodWatcherTest, OnChangeMayDestroyTheWatcher) {
  // kube_client.h's rule: an owner may destroy its watcher from on_change,
  // on every path that notifies (ASan and valgrind see a use after free).
  // Each case: what the server sends to the watch (request 0) or the list.
  struct Case {
    const char* name;
    std::function<void(FakeHttpTransport&, size_t)> send;
    bool list_first;
  };
  const std::vector<Case> cases = {
      {"event",
       [](FakeHttpTransport& t, size_t i) {
         t.Headers(i, 200);
         t.Data(i, Line("MODIFIED", PodJson("uid-1", "6", "Running")) +
                       Line("MODIFIED", PodJson("uid-1", "7", "Running")));
       },
       false},
      {"in-stream error that fails",
       [](FakeHttpTransport& t, size_t i) {
         t.Headers(i, 200);
         t.Data(i, Line("ERROR", StatusBody(400, "BadRequest")));
       },
       false},
      {"watch end that fails",
       [](FakeHttpTransport& t, size_t i) {
         t.Done(i, FailedPreconditionError("x509: certificate verify failed"));
       },
       false},
      {"list",
       [](FakeHttpTransport& t, size_t i) {
         t.Respond(i, 200,
                   R"({"metadata":{"resourceVersion":"9"},"items":[)" +
                       PodJson("uid-1", "8", "Running") + "]}");
       },
       true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeHttpTransport transport;
    KubeClient client(&transport, ClusterConfig{});
    std::unique_ptr<PodWatcher> w;
    int changes = 0;
    w = std::make_unique<PodWatcher>(
        &client, &clock_, "default", "w0",
        [&] {
          ++changes;
          w.reset();
        },
        4);
    if (c.list_first) {
      w->Start(std::nullopt, "", clock_.Now());
    } else {
      w->Start(RunningPod("5"), "5", clock_.Now());
    }
    c.send(transport, 0);
    EXPECT_EQ(w, nullptr);
    EXPECT_EQ(changes, 1);
    EXPECT_TRUE(transport.cancelled(0) || !transport.active(0));
  }
}

// ---- Watches that keep failing, and silent ones ----------------------

TEST_F(PodWatcherTest, InStreamServerErrorRelistsAfterTheBackoff) {
  // Given a watch answered by an in-stream ERROR 500 (LIST works), expect
  // the retry to LIST (as client-go's reflector does after a watch error),
  // so a pod that turned Running meanwhile is seen.
  StartWatchingAt("5");
  transport_.Data(0, Line("ERROR", StatusBody(500, "InternalError")));
  EXPECT_EQ(watcher_.state(), State::kBackingOff);
  EXPECT_EQ(transport_.size(), 1u);
  clock_.Advance(watcher_.NextWake() - clock_.Now());
  Tick();
  ASSERT_EQ(transport_.size(), 2u);
  EXPECT_FALSE(IsWatch(transport_.last())) << transport_.last().path;
  transport_.Respond(1, 200,
                     R"({"metadata":{"resourceVersion":"300"},"items":[)" +
                         PodJson("uid-1", "250", "Succeeded") + "]}");
  EXPECT_EQ(watcher_.pod()->phase, "Succeeded");
  ExpectWatchFrom("300");
}

TEST_F(PodWatcherTest, RepeatedlyFailingWatchesRelist) {
  // Given watches that each break mid-chunk, expect re-watches from the
  // same version at first, then a LIST after the third failure in a row.
  StartWatchingAt("5");
  for (int i = 0; i < PodWatcher::kRelistAfterFailedWatches; ++i) {
    size_t last = transport_.last_index();
    ASSERT_TRUE(IsWatch(transport_.last())) << "attempt " << i;
    EXPECT_EQ(QueryParam(transport_.last(), "resourceVersion"), "5");
    transport_.Headers(last, 200);
    transport_.Data(last, R"({"type":"MODIFIED","obj)");
    transport_.Done(last, UnavailableError("transfer closed with outstanding "
                                           "read data remaining"));
    ASSERT_EQ(watcher_.state(), State::kBackingOff);
    clock_.Advance(watcher_.NextWake() - clock_.Now());
    Tick();
  }
  EXPECT_FALSE(IsWatch(transport_.last())) << transport_.last().path;
  EXPECT_EQ(watcher_.lists_started(), 1);
  EXPECT_EQ(watcher_.watches_started(), 3);
}

TEST_F(PodWatcherTest, SilentWatchIsClosedAfterTheIdleLimitAndResumed) {
  // Given an open watch on a stopped server (no bytes, connection open),
  // expect it closed after 90 s without an event (bookmarks come about
  // every 60 s), logged at -v, and a re-watch from the latest version.
  StartWatchingAt("5");
  clock_.Advance(seconds(60));
  Tick();
  transport_.Data(0, Bookmark("9"));  // A bookmark restarts the idle limit.
  clock_.Advance(seconds(89));
  Tick();
  EXPECT_TRUE(transport_.active(0));
  EXPECT_EQ(watcher_.NextWake(), clock_.Now() + seconds(1));
  std::string log = CaptureLog([&] {
    SetLogLevel(LogLevel::kInfo);
    clock_.Advance(seconds(1));
    Tick();
    SetLogLevel(LogLevel::kWarning);
  });
  EXPECT_THAT(log, ::testing::HasSubstr(
                       "pod default/w0: watch idle for 1m30s: reconnecting"));
  EXPECT_TRUE(transport_.cancelled(0));
  EXPECT_EQ(watcher_.state(), State::kBackingOff);
  EXPECT_TRUE(watcher_.api_health().troubled());
  clock_.Advance(watcher_.NextWake() - clock_.Now());
  Tick();
  ASSERT_EQ(transport_.size(), 2u);
  ExpectWatchFrom("9");
}

TEST_F(PodWatcherTest, WatchIdleTimeoutIsSettable) {
  watcher_.set_watch_idle_timeout(seconds(3));
  StartWatchingAt("5");
  EXPECT_EQ(watcher_.NextWake(), clock_.Now() + seconds(3));
}

// ---- Selector mode ----------------------------------------------------------

std::string NamedPod(const std::string& name, const std::string& uid,
                     const std::string& rv, const std::string& phase) {
  return R"({"kind":"Pod","metadata":{"name":")" + name +
         R"(","namespace":"default","uid":")" + uid +
         R"(","resourceVersion":")" + rv + R"("},"status":{"phase":")" + phase +
         R"("}})";
}

class PodSetWatcherTest : public PodWatcherTest {
 protected:
  PodSetWatcherTest()
      : set_(
            &client_, &clock_, "default", PodWatcher::Selector{"role=worker"},
            [this] { ++set_changes_; }, 7) {}
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& [name, pod] : set_.pods()) names.push_back(name);
    return names;
  }
  int set_changes_ = 0;
  PodWatcher set_;
};

TEST_F(PodSetWatcherTest, PagedListThenWatchBySelector) {
  set_.Start(std::nullopt, "", clock_.Now());
  ASSERT_EQ(transport_.size(), 1u);
  EXPECT_EQ(QueryParam(transport_.request(0), "labelSelector"),
            "role%3Dworker");
  EXPECT_EQ(QueryParam(transport_.request(0), "fieldSelector"), "");
  EXPECT_EQ(QueryParam(transport_.request(0), "limit"), "500");
  transport_.Respond(
      0, 200,
      R"({"metadata":{"resourceVersion":"100","continue":"c1"},"items":[)" +
          NamedPod("w-1", "u1", "90", "Running") + "]}");
  EXPECT_FALSE(set_.synced());
  EXPECT_EQ(set_changes_, 0);
  ASSERT_EQ(transport_.size(), 2u);
  EXPECT_FALSE(IsWatch(transport_.request(1)));
  EXPECT_EQ(QueryParam(transport_.request(1), "continue"), "c1");
  transport_.Respond(1, 200,
                     R"({"metadata":{"resourceVersion":"100"},"items":[)" +
                         NamedPod("w-0", "u0", "91", "Pending") + "]}");
  EXPECT_TRUE(set_.synced());
  EXPECT_EQ(set_changes_, 1);
  EXPECT_THAT(Names(), ::testing::ElementsAre("w-0", "w-1"));
  ASSERT_EQ(transport_.size(), 3u);
  const HttpRequest& w = transport_.request(2);
  EXPECT_TRUE(IsWatch(w));
  EXPECT_EQ(QueryParam(w, "resourceVersion"), "100");
  EXPECT_EQ(QueryParam(w, "labelSelector"), "role%3Dworker");
  EXPECT_EQ(QueryParam(w, "fieldSelector"), "");

  transport_.Headers(2, 200);
  transport_.Data(2,
                  Line("MODIFIED", NamedPod("w-0", "u0", "101", "Running")) +
                      Line("ADDED", NamedPod("w-2", "u2", "102", "Pending")) +
                      Line("DELETED", NamedPod("w-1", "u1", "103", "Running")));
  EXPECT_EQ(set_changes_, 4);
  EXPECT_THAT(Names(), ::testing::ElementsAre("w-0", "w-2"));
  EXPECT_EQ(set_.pods().at("w-0").phase, "Running");
  // Resumes from the last event's rv after a clean end.
  clock_.Advance(seconds(30));
  transport_.Done(2);
  EXPECT_EQ(QueryParam(transport_.last(), "resourceVersion"), "103");
}

TEST_F(PodSetWatcherTest, EmptyFirstListStillNotifies) {
  set_.Start(std::nullopt, "", clock_.Now());
  transport_.Respond(0, 200,
                     R"({"metadata":{"resourceVersion":"5"},"items":[]})");
  EXPECT_TRUE(set_.synced());
  EXPECT_EQ(set_changes_, 1);
  EXPECT_TRUE(set_.pods().empty());
}

TEST_F(PodSetWatcherTest, ListOnlyStopsAfterTheList) {
  set_.set_list_only(true);
  set_.Start(std::nullopt, "", clock_.Now());
  transport_.Respond(0, 503, StatusBody(503, "ServiceUnavailable"));
  EXPECT_EQ(set_.state(), State::kBackingOff);
  EXPECT_FALSE(set_.synced());
  clock_.Advance(seconds(5));
  set_.OnTimer(clock_.Now());
  ASSERT_EQ(transport_.size(), 2u);
  EXPECT_FALSE(IsWatch(transport_.request(1)));
  transport_.Respond(1, 200,
                     R"({"metadata":{"resourceVersion":"5"},"items":[)" +
                         NamedPod("w-0", "u0", "4", "Running") + "]}");
  EXPECT_EQ(set_.state(), State::kIdle);
  EXPECT_TRUE(set_.synced());
  EXPECT_EQ(set_changes_, 1);
  EXPECT_EQ(transport_.size(), 2u);  // No watch.
}

TEST_F(PodSetWatcherTest, ExpiredContinueRestartsTheListFromScratch) {
  set_.Start(std::nullopt, "", clock_.Now());
  transport_.Respond(
      0, 200,
      R"({"metadata":{"resourceVersion":"100","continue":"c1"},"items":[)" +
          NamedPod("w-1", "u1", "90", "Running") + "]}");
  transport_.Respond(1, 410, StatusBody(410, "Expired"));
  EXPECT_EQ(set_.state(), State::kBackingOff);
  clock_.Advance(seconds(5));
  set_.OnTimer(clock_.Now());
  ASSERT_EQ(transport_.size(), 3u);
  EXPECT_EQ(QueryParam(transport_.request(2), "continue"), "");
  transport_.Respond(2, 200,
                     R"({"metadata":{"resourceVersion":"120"},"items":[)" +
                         NamedPod("w-0", "u0", "110", "Running") + "]}");
  EXPECT_THAT(Names(), ::testing::ElementsAre("w-0"));  // No stale w-1.
}

}  // namespace
}  // namespace k8s_agent::kube
