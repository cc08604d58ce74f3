// SPDX-License-Identifier: Apache-2.0
// What a broken or hostile API server may send: no crash, bounded memory.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include "plugin/base/log.h"
#include "plugin/base/strings.h"
#include "plugin/kube/api_status.h"
#include "plugin/kube/json_depth.h"
#include "plugin/kube/kube_client.h"
#include "plugin/kube/pod.h"
#include "plugin/kube/pod_watcher.h"
#include "plugin/kube/watch_decoder.h"
#include "tests/fakes/fake_http_transport.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent::kube {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kPod[] =
    R"({"kind":"Pod","metadata":{"name":"w0","namespace":"default","uid":"u1","resourceVersion":"7","labels":{"a":"b"}},"spec":{"containers":[{"name":"main","resources":{"limits":{"cpu":"1"}}}]},"status":{"phase":"Running","podIP":"10.0.0.5","podIPs":[{"ip":"10.0.0.5"}],"conditions":[{"type":"Ready","status":"True"}],"containerStatuses":[{"name":"main","ready":true,"restartCount":0,"state":{"running":{}}}]}})";

std::string Nested(size_t levels, char open, char close) {
  return std::string(levels, open) + std::string(levels, close);
}

TEST(JsonDepthTest, CountsOnlyStructureOutsideStrings) {
  EXPECT_THAT(CheckJsonDepth(kPod), IsOk());
  EXPECT_THAT(CheckJsonDepth(Nested(3, '[', ']'), 3), IsOk());
  EXPECT_THAT(CheckJsonDepth(Nested(4, '[', ']'), 3),
              StatusIs(Code::kInternal, "nested deeper than 3 levels"));
  // Brackets in strings, escaped quotes included, do not count.
  EXPECT_THAT(CheckJsonDepth(R"(["[[[[\"[[[[", {"k":"{{{{"}])", 2), IsOk());
  // Stray closers cannot pay for extra depth.
  EXPECT_THAT(CheckJsonDepth("]]]]][[[[", 3), Not(IsOk()));
}

TEST(HostileInputTest, DeeplyNestedPodIsRejectedBeforeParsing) {
  std::string arrays = Nested(100000, '[', ']');
  EXPECT_THAT(Pod::FromJson(arrays), StatusIs(Code::kInternal, "nested"));
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += R"({"a":)";
  objects += "1" + std::string(100000, '}');
  EXPECT_THAT(Pod::FromJson(objects), StatusIs(Code::kInternal, "nested"));
  // Deep inside an otherwise valid pod, in a field we read.
  std::string labels =
      R"({"metadata":{"name":"w0","labels":)" + Nested(1000, '[', ']') + "}}";
  EXPECT_THAT(Pod::FromJson(labels), StatusIs(Code::kInternal, "nested"));
  // An unterminated "[[[[..." (16 MiB would cost gigabytes as a DOM).
  EXPECT_THAT(Pod::FromJson(std::string(16u << 20, '[')),
              StatusIs(Code::kInternal, "nested"));
  EXPECT_THAT(PodList::FromJson(R"({"items":)" + Nested(5000, '[', ']') + "}"),
              StatusIs(Code::kInternal, "nested"));
}

TEST(HostileInputTest, DeeplyNestedWatchEventAndErrorBody) {
  std::string line =
      R"({"type":"ADDED","object":)" + Nested(100000, '{', '}') + "}";
  auto event = ParseWatchEvent(line);
  EXPECT_THAT(event.status(), StatusIs(Code::kInternal, "nested"));
  // The excerpt stays short however long the line.
  EXPECT_LT(event.status().message().size(), 400u);
  // An error body that cannot be parsed still yields the HTTP status.
  Status s = StatusFromApiResponse(500, Nested(60000, '[', ']'));
  EXPECT_THAT(s, StatusIs(Code::kUnavailable, "HTTP 500"));
}

TEST(HostileInputTest, EveryTruncationOfAPodIsAnErrorNotACrash) {
  std::string pod = kPod;
  ASSERT_THAT(Pod::FromJson(pod).status(), IsOk());
  for (size_t n = 0; n < pod.size(); ++n) {
    auto parsed = Pod::FromJson(std::string_view(pod).substr(0, n));
    EXPECT_FALSE(parsed.ok()) << "prefix of " << n << " bytes parsed";
    auto event =
        ParseWatchEvent(R"({"type":"ADDED","object":)" + pod.substr(0, n));
    EXPECT_FALSE(event.ok()) << n;
  }
}

TEST(HostileInputTest, InvalidUtf8IsAPrintableError) {
  std::string pod = R"({"metadata":{"name":"w)"
                    "\xff\xfe\xc3"
                    R"("},"status":{"phase":"Running"}})";
  auto parsed = Pod::FromJson(pod);
  ASSERT_THAT(parsed.status(), StatusIs(Code::kInternal, "malformed"));
  // The message must be safe to print to a terminal and to the trace.
  EXPECT_EQ(parsed.status().message(),
            Printable(parsed.status().message(), 10000));
  auto event = ParseWatchEvent(R"({"type":"MODIFIED","object":)" + pod + "}");
  EXPECT_THAT(event.status(), StatusIs(Code::kInternal, "malformed"));
  EXPECT_EQ(event.status().message(),
            Printable(event.status().message(), 10000));
}

TEST(HostileInputTest, WrongTypesEverywhereNameTheField) {
  const char* cases[] = {
      R"({"metadata":[]})",
      R"({"metadata":{"name":7}})",
      R"({"metadata":{"labels":{"a":1}}})",
      R"({"metadata":{"labels":"a=b"}})",
      R"({"status":"Running"})",
      R"({"status":{"phase":["Running"]}})",
      R"({"status":{"podIPs":{"ip":"1.2.3.4"}}})",
      R"({"status":{"podIPs":[7]}})",
      R"({"status":{"conditions":[{"type":"Ready","status":true}]}})",
      R"({"status":{"containerStatuses":{"name":"main"}}})",
      R"({"status":{"containerStatuses":[{"restartCount":"3"}]}})",
      R"({"status":{"containerStatuses":[{"restartCount":1e300}]}})",
      R"({"status":{"containerStatuses":[{"state":{"terminated":{"exitCode":-1e99}}}]}})",
      R"({"spec":{"containers":[{"resources":{"limits":{"cpu":1}}}]}})",
      R"({"spec":{"containers":"main"}})",
  };
  for (const char* c : cases) {
    auto parsed = Pod::FromJson(c);
    // Each is either rejected naming a field, or read with the bad field
    // ignored; never a crash or an exception.
    if (!parsed.ok()) {
      EXPECT_EQ(parsed.status().code(), Code::kInternal) << c;
    }
  }
  for (const char* c :
       {"null", "7", "\"pod\"", "[]", "true", "", " ", "{", "}"}) {
    EXPECT_FALSE(Pod::FromJson(c).ok()) << c;
  }
}

TEST(HostileInputTest, HugeLineInAWatchIsBoundedError) {
  WatchDecoder decoder(1u << 20);
  std::vector<WatchEvent> events;
  std::string chunk(64u << 10, 'x');  // An endless line, no '\n'.
  Status s;
  int fed = 0;
  while (s.ok() && fed < 1000) {
    s = decoder.Feed(chunk, &events);
    ++fed;
  }
  EXPECT_THAT(s, StatusIs(Code::kTooLarge));
  EXPECT_LE(decoder.buffered(), size_t{1} << 20);
  EXPECT_LT(fed, 20);  // Failed as soon as the limit was crossed.
}

class HostileClientTest : public ::testing::Test {
 protected:
  HostileClientTest() : client_(&transport_, Config()) {}
  static ClusterConfig Config() {
    ClusterConfig c;
    c.server = "https://127.0.0.1:6443";
    c.ns = "default";
    c.token = "secret-token";
    return c;
  }
  FakeHttpTransport transport_;
  KubeClient client_;
};

TEST_F(HostileClientTest, BodyFarOverTheLimitIsAnErrorNotAnAllocation) {
  std::optional<StatusOr<PodList>> result;
  ApiCall call =
      client_.ListPods("default", ListOptions{},
                       [&](StatusOr<PodList> l) { result = std::move(l); });
  transport_.Headers(0, 200);
  std::string mib(1u << 20, ' ');
  for (int i = 0; i < 80; ++i) transport_.Data(0, mib);  // 80 MiB of blanks.
  transport_.Done(0);
  ASSERT_TRUE(result.has_value());
  EXPECT_THAT(result->status(),
              StatusIs(Code::kTooLarge, "response larger than"));
}

TEST_F(HostileClientTest, HugeErrorBodyGivesABoundedMessage) {
  std::optional<StatusOr<PodList>> result;
  ApiCall call =
      client_.ListPods("default", ListOptions{},
                       [&](StatusOr<PodList> l) { result = std::move(l); });
  transport_.Headers(0, 503);
  std::string mib(1u << 20, 'e');
  for (int i = 0; i < 8; ++i) transport_.Data(0, mib);
  transport_.Done(0);
  ASSERT_TRUE(result.has_value());
  EXPECT_THAT(result->status(), StatusIs(Code::kUnavailable, "HTTP 503"));
  EXPECT_LT(result->status().message().size(), 1000u);
  EXPECT_THAT(result->status().message(), Not(HasSubstr("secret-token")));
}

TEST_F(HostileClientTest, WatchAnsweredWithAnHtmlPageSaysSo) {
  // Given a 200 whose body is a proxy's HTML page, expect an error that
  // says "HTML page" rather than "malformed watch event".
  std::optional<Status> end;
  ApiCall call = client_.WatchPods(
      "default", {}, [](const WatchEvent&) {},
      [&](const Status& s) { end = s; });
  transport_.Headers(0, 200, {{"content-type", "text/html; charset=utf-8"}});
  transport_.Data(0, "<!DOCTYPE html><html><body>Sign in</body></html>\n");
  ASSERT_TRUE(end.has_value());
  EXPECT_THAT(*end, StatusIs(Code::kInternal,
                             "watch pods in default: the "
                             "server answered 200 with an "
                             "HTML page"));
  EXPECT_THAT(end->message(), HasSubstr("Sign in"));
}

TEST_F(HostileClientTest, HtmlWatchAnswerFailsNamingThePage) {
  // Given the same HTML answer to a PodWatcher, expect it to fail at once
  // naming the HTML page: the one retry policy (api_retry.h) does not
  // retry malformed answers, in a watch as anywhere else, so a login portal
  // in front of the API server is reported instead of retried until
  // --timeout.
  PodWatcher watcher(
      &client_, RealClock::Get(), "default", "w0", [] {}, 1);
  watcher.Start(std::nullopt, "5", RealClock::Get()->Now());
  transport_.Headers(0, 200, {{"content-type", "text/html"}});
  transport_.Data(0, "<html>proxy error</html>");
  EXPECT_EQ(watcher.state(), PodWatcher::State::kFailed);
  EXPECT_THAT(watcher.error().message(), HasSubstr("HTML page"));
  EXPECT_THAT(watcher.error().message(), HasSubstr("proxy error"));
}

}  // namespace
}  // namespace k8s_agent::kube
