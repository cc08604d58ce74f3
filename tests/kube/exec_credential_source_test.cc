// SPDX-License-Identifier: Apache-2.0
// ExecCredentialSource's state machine, on a FakeClock with scripted plugin
// runs: pending while the plugin runs, waiting for another agent's lock on
// a timer, refreshing after a 401 or near expiry.

#include "plugin/kube/exec_credential_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tests/fakes/fake_clock.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent::kube {
namespace {

using ::testing::HasSubstr;

// A run that ends when the test says.
class ScriptedRun : public ExecRun {
 public:
  bool done() const override { return done_; }
  const StatusOr<ExecCredential>& result() const override { return result_; }
  void CollectFds(std::vector<pollfd>*) override {}
  TimePoint NextWake() const override { return TimePoint::max(); }
  void OnFdReady(int, short, TimePoint) override {}
  void OnTimer(TimePoint) override {}
  void Finish(StatusOr<ExecCredential> answer) {
    result_ = std::move(answer);
    done_ = true;
  }

 private:
  bool done_ = false;
  StatusOr<ExecCredential> result_ = InternalError("running");
};

ExecCredential Token(const std::string& token, int64_t expires_at) {
  ExecCredential c;
  c.token = token;
  c.expires_at = expires_at;
  return c;
}

class ExecCredentialSourceTest : public ::testing::Test {
 protected:
  ExecCredentialSourceTest() {
    char tmpl[] = "/tmp/k8s-exec-src-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  ~ExecCredentialSourceTest() override { std::filesystem::remove_all(dir_); }

  CredentialCache Cache(bool shared = true) {
    return CredentialCache(shared ? dir_ + "/cache" : "", "key",
                           [this] { return wall_; });
  }
  std::unique_ptr<ExecCredentialSource> Source(bool shared = true) {
    return std::make_unique<ExecCredentialSource>(
        "exec plugin aws (KC: user \"u\")", Cache(shared),
        [this](TimePoint) -> StatusOr<std::unique_ptr<ExecRun>> {
          if (!start_error_.ok()) return start_error_;
          auto run = std::make_unique<ScriptedRun>();
          runs_.push_back(run.get());
          return std::unique_ptr<ExecRun>(std::move(run));
        });
  }
  // Get(), expecting a credential; its token.
  std::string TokenOf(ExecCredentialSource* s) {
    StatusOr<MaybeCredential> got = s->Get(clock_.Now());
    if (!got.ok()) return "error: " + got.status().message();
    if (!got->has_value()) return "pending";
    return (*got)->token;
  }
  // The run just finished is taken in, as the loop does on its next event.
  void Finish(ExecCredentialSource* s, StatusOr<ExecCredential> answer) {
    runs_.back()->Finish(std::move(answer));
    s->OnTimer(clock_.Now());
  }

  std::string dir_;
  FakeClock clock_;
  int64_t wall_ = 1000000;
  std::vector<ScriptedRun*> runs_;
  Status start_error_;
};

TEST_F(ExecCredentialSourceTest, PendingWhileThePluginRunsThenReady) {
  // Given a plugin still running, expect Get() to answer "pending" at once,
  // every time, with one run; then the token once it printed one.
  auto s = Source();
  EXPECT_EQ(TokenOf(s.get()), "pending");
  EXPECT_EQ(s->state(), ExecCredentialSource::State::kRunning);
  clock_.Advance(seconds(5));
  EXPECT_EQ(TokenOf(s.get()), "pending");
  EXPECT_EQ(runs_.size(), 1u);
  EXPECT_THAT(s->Waiting(clock_.Now()),
              HasSubstr("exec plugin aws (KC: user \"u\") has not printed a "
                        "credential after 5.0s"));
  Finish(s.get(), Token("t1", wall_ + 3600));
  EXPECT_EQ(s->state(), ExecCredentialSource::State::kIdle);
  EXPECT_EQ(TokenOf(s.get()), "t1");
  EXPECT_EQ(TokenOf(s.get()), "t1");
  EXPECT_EQ(runs_.size(), 1u);
}

TEST_F(ExecCredentialSourceTest, FailureIsReturnedOnceThenRunsAgain) {
  auto s = Source();
  EXPECT_EQ(TokenOf(s.get()), "pending");
  Finish(s.get(), FailedPreconditionError("plugin exited with status 3"));
  EXPECT_EQ(TokenOf(s.get()), "error: plugin exited with status 3");
  EXPECT_EQ(TokenOf(s.get()), "pending");
  EXPECT_EQ(runs_.size(), 2u);
}

TEST_F(ExecCredentialSourceTest, AStartFailureIsAnsweredAtOnce) {
  start_error_ = FailedPreconditionError("not found in $PATH");
  auto s = Source();
  EXPECT_EQ(TokenOf(s.get()), "error: not found in $PATH");
  EXPECT_EQ(s->state(), ExecCredentialSource::State::kIdle);
}

TEST_F(ExecCredentialSourceTest, AnotherAgentsLockIsRetriedOnATimer) {
  // Given another agent holding the lock (its plugin runs), expect no run
  // and no wait here: a retry timer 50 ms on, and that agent's answer
  // taken from the file as soon as it is there.
  CredentialCache other = Cache();
  ASSERT_EQ(other.TryLock(), CredentialCache::Lock::kHeld);
  auto s = Source();
  EXPECT_EQ(TokenOf(s.get()), "pending");
  EXPECT_EQ(s->state(), ExecCredentialSource::State::kLocking);
  EXPECT_EQ(s->NextWake(), clock_.Now() + kCredentialLockRetry);
  clock_.Advance(kCredentialLockRetry);
  s->OnTimer(clock_.Now());
  EXPECT_EQ(s->state(), ExecCredentialSource::State::kLocking);
  EXPECT_EQ(s->NextWake(), clock_.Now() + kCredentialLockRetry);
  other.Store(Token("theirs", wall_ + 3600));
  clock_.Advance(kCredentialLockRetry);
  s->OnTimer(clock_.Now());
  EXPECT_EQ(s->state(), ExecCredentialSource::State::kIdle);
  EXPECT_EQ(TokenOf(s.get()), "theirs");
  EXPECT_TRUE(runs_.empty());
}

TEST_F(ExecCredentialSourceTest, ALockHeldPastPatienceRunsThePluginUnshared) {
  CredentialCache other = Cache();
  ASSERT_EQ(other.TryLock(), CredentialCache::Lock::kHeld);
  auto s = Source();
  EXPECT_EQ(TokenOf(s.get()), "pending");
  clock_.Advance(kCredentialLockPatience - milliseconds(1));
  s->OnTimer(clock_.Now());
  EXPECT_TRUE(runs_.empty());
  EXPECT_EQ(s->state(), ExecCredentialSource::State::kLocking);
  clock_.Advance(kCredentialLockRetry);  // The next retry is past it.
  s->OnTimer(clock_.Now());
  ASSERT_EQ(runs_.size(), 1u);
  Finish(s.get(), Token("mine", wall_ + 3600));
  EXPECT_EQ(TokenOf(s.get()), "mine");
}

TEST_F(ExecCredentialSourceTest, TheLockIsFreeAgainAfterTheRun) {
  auto s = Source();
  EXPECT_EQ(TokenOf(s.get()), "pending");
  CredentialCache other = Cache();
  EXPECT_EQ(other.TryLock(), CredentialCache::Lock::kBusy);
  Finish(s.get(), Token("t1", wall_ + 3600));
  EXPECT_EQ(other.TryLock(), CredentialCache::Lock::kHeld);
  EXPECT_THAT(other.ReadFresh(""), IsOk());
}

TEST_F(ExecCredentialSourceTest, A401RunsThePluginAgainAndSaysSo) {
  // Given a token refused with 401 that the shared file still holds,
  // expect a second run (not the file's copy), and a description naming
  // the plugin and both runs.
  auto s = Source();
  EXPECT_EQ(TokenOf(s.get()), "pending");
  Finish(s.get(), Token("t1", wall_ + 3600));
  EXPECT_EQ(TokenOf(s.get()), "t1");
  s->Invalidate();
  EXPECT_EQ(TokenOf(s.get()), "pending");
  ASSERT_EQ(runs_.size(), 2u);
  Finish(s.get(), Token("t2", wall_ + 3600));
  EXPECT_EQ(TokenOf(s.get()), "t2");
  EXPECT_EQ(s->Describe(),
            "the token from exec plugin aws (KC: user \"u\"); the plugin ran "
            "2 times in this agent");
}

TEST_F(ExecCredentialSourceTest, NearExpiryRefreshes) {
  auto s = Source(/*shared=*/false);
  EXPECT_EQ(TokenOf(s.get()), "pending");
  Finish(s.get(), Token("t1", wall_ + 100));
  EXPECT_EQ(TokenOf(s.get()), "t1");
  wall_ += 100 - kCredentialMarginSeconds - 1;
  EXPECT_EQ(TokenOf(s.get()), "t1");
  wall_ += 1;
  EXPECT_EQ(TokenOf(s.get()), "pending");
  EXPECT_EQ(runs_.size(), 2u);
}

}  // namespace
}  // namespace k8s_agent::kube
