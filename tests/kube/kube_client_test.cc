// SPDX-License-Identifier: Apache-2.0
// KubeClient: request paths, escaping, headers and status mapping.

#include "plugin/kube/kube_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>

#include "tests/fakes/fake_http_transport.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent::kube {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::SizeIs;

constexpr char kPodW0[] =
    R"({"kind":"Pod","metadata":{"name":"w0","namespace":"default","uid":"u1","resourceVersion":"7"},"status":{"phase":"Running","podIP":"10.0.0.5"}})";

ListOptions ByName(const std::string& name) {
  ListOptions options;
  options.field_selector = "metadata.name=" + name;
  return options;
}

std::string StatusBody(int code, const std::string& reason,
                       const std::string& message) {
  return R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":")" +
         message + R"(","reason":")" + reason + R"(","code":)" +
         std::to_string(code) + "}";
}

class KubeClientTest : public ::testing::Test {
 protected:
  KubeClientTest() : client_(&transport_, Config()) {}
  static ClusterConfig Config() {
    ClusterConfig c;
    c.server = "https://127.0.0.1:6443";
    c.ns = "default";
    c.token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
    return c;
  }
  FakeHttpTransport transport_;
  KubeClient client_;
};

TEST_F(KubeClientTest, ListByNameRequestAndAnswer) {
  // How the agent looks a host's pod up: a list with a field selector.
  std::optional<StatusOr<PodList>> result;
  ApiCall call =
      client_.ListPods("default", ByName("w0"),
                       [&](StatusOr<PodList> l) { result = std::move(l); });
  ASSERT_EQ(transport_.size(), 1u);
  const HttpRequest& r = transport_.last();
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.path,
            "/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3Dw0");
  EXPECT_FALSE(r.streaming);
  EXPECT_THAT(r.headers, Contains("Accept: application/json"));
  EXPECT_THAT(r.headers, Contains("User-Agent: k8s-agent/0.1"));
  EXPECT_FALSE(result.has_value());  // Never synchronous.
  transport_.Headers(0, 200);
  std::string body = R"({"metadata":{"resourceVersion":"9"},"items":[)" +
                     std::string(kPodW0) + "]}";
  transport_.Data(0, body.substr(0, 10));
  transport_.Data(0, body.substr(10));
  transport_.Done(0);
  ASSERT_TRUE(result.has_value());
  ASSERT_THAT(*result, IsOk());
  ASSERT_THAT((*result)->items, SizeIs(1));
  EXPECT_EQ((*result)->items[0].pod_ip, "10.0.0.5");
  EXPECT_EQ(client_.requests(), 1);
}

TEST_F(KubeClientTest, NotFound) {
  std::optional<StatusOr<PodList>> result;
  ApiCall call =
      client_.ListPods("default", ListOptions{},
                       [&](StatusOr<PodList> l) { result = std::move(l); });
  transport_.Respond(
      0, 404, StatusBody(404, "NotFound", "pods \\\"nope\\\" not found"));
  ASSERT_TRUE(result.has_value());
  EXPECT_THAT(*result, StatusIs(Code::kNotFound, "pods \"nope\" not found"));
}

TEST_F(KubeClientTest, ForbiddenNamesVerbResourceAndRbac) {
  std::optional<Status> end;
  ApiCall call = client_.WatchPods(
      "default", WatchOptions{}, [](const WatchEvent&) {},
      [&](const Status& s) { end = s; });
  transport_.Respond(
      0, 403,
      StatusBody(403, "Forbidden",
                 "pods is forbidden: User "
                 "\\\"system:serviceaccount:default:x\\\" cannot watch"));
  ASSERT_TRUE(end.has_value());
  EXPECT_THAT(*end,
              StatusIs(Code::kPermissionDenied,
                       "cannot \"watch\" \"pods\" in namespace \"default\" "
                       "(grant list/watch on pods: see "
                       "images/k8s/role.yaml)"));
  EXPECT_THAT(end->message(), HasSubstr("system:serviceaccount:default:x"));
}

TEST_F(KubeClientTest, UnauthorizedNamesTokenFileNotToken) {
  std::optional<StatusOr<PodList>> result;
  ApiCall call =
      client_.ListPods("default", ByName("w0"),
                       [&](StatusOr<PodList> l) { result = std::move(l); });
  transport_.Respond(0, 401, StatusBody(401, "Unauthorized", "Unauthorized"));
  EXPECT_THAT(*result, StatusIs(Code::kUnauthenticated, "token file /var/run"));
  client_.InvalidateToken();
  EXPECT_EQ(transport_.token_invalidations(), 1);
}

TEST_F(KubeClientTest, StatusMapping) {
  struct Case {
    int http;
    std::string body;
    Code code;
  } cases[] = {
      {410, StatusBody(410, "Expired", "too old"), Code::kExpired},
      {500, StatusBody(500, "InternalError", "boom"), Code::kUnavailable},
      {503, "<html>service unavailable</html>", Code::kUnavailable},
      {502, "", Code::kUnavailable},
      {400, StatusBody(400, "BadRequest", "bad selector"),
       Code::kInvalidArgument},
      {429, StatusBody(429, "TooManyRequests", "slow down"),
       Code::kResourceExhausted},
      {418, "teapot", Code::kInternal},
  };
  for (const Case& c : cases) {
    std::optional<StatusOr<PodList>> result;
    ApiCall call =
        client_.ListPods("default", ListOptions{},
                         [&](StatusOr<PodList> l) { result = std::move(l); });
    transport_.Respond(transport_.last_index(), c.http, c.body);
    ASSERT_TRUE(result.has_value());
    EXPECT_THAT(*result, StatusIs(c.code)) << c.http;
  }
}

TEST_F(KubeClientTest, RetryAfterTravelsInTheStatus) {
  // Given a 429 with Retry-After and a 504 whose Status carries
  // retryAfterSeconds, expect both delays in the returned Status.
  std::optional<StatusOr<PodList>> result;
  ApiCall call =
      client_.ListPods("default", ByName("w0"),
                       [&](StatusOr<PodList> l) { result = std::move(l); });
  transport_.Respond(0, 429, StatusBody(429, "TooManyRequests", "slow"),
                     {{"retry-after", "3"}});
  EXPECT_THAT(*result, StatusIs(Code::kResourceExhausted, "Retry-After 3.0s"));
  EXPECT_EQ(result->status().retry_after(), seconds(3));
  call = client_.ListPods("default", ByName("w0"),
                          [&](StatusOr<PodList> l) { result = std::move(l); });
  transport_.Respond(
      1, 504,
      R"({"kind":"Status","code":504,"reason":"Timeout","message":"Too large )"
      R"(resource version","details":{"retryAfterSeconds":1}})");
  EXPECT_THAT(*result, StatusIs(Code::kUnavailable));
  EXPECT_EQ(result->status().retry_after(), seconds(1));
  call = client_.ListPods("default", ByName("w0"),
                          [&](StatusOr<PodList> l) { result = std::move(l); });
  transport_.Respond(2, 503, "unavailable");
  EXPECT_EQ(result->status().retry_after(), Duration::zero());
}

TEST_F(KubeClientTest, ListEscapesQueryValues) {
  ListOptions options;
  options.label_selector = "app in (a,b),role!=x";
  options.field_selector = "metadata.name=w0";
  options.limit = 10;
  options.continue_token = "ab+c/=";
  ApiCall call = client_.ListPods("my-ns", options, [](StatusOr<PodList>) {});
  EXPECT_EQ(transport_.last().path,
            "/api/v1/namespaces/my-ns/pods?fieldSelector=metadata.name%3Dw0&"
            "labelSelector=app%20in%20%28a%2Cb%29%2Crole%21%3Dx&limit=10&"
            "continue=ab%2Bc%2F%3D");
}

TEST_F(KubeClientTest, ListResourceVersionOnlyOnTheFirstPage) {
  // Given resourceVersion=0 (the watch cache), expect it on a first page
  // and not with a continue token, which names its own snapshot.
  ListOptions options;
  options.field_selector = "metadata.name=w0";
  options.resource_version = "0";
  ApiCall call = client_.ListPods("ns", options, [](StatusOr<PodList>) {});
  EXPECT_EQ(transport_.last().path,
            "/api/v1/namespaces/ns/pods?fieldSelector=metadata.name%3Dw0&"
            "resourceVersion=0");
  options.continue_token = "next";
  call = client_.ListPods("ns", options, [](StatusOr<PodList>) {});
  EXPECT_EQ(transport_.last().path,
            "/api/v1/namespaces/ns/pods?fieldSelector=metadata.name%3Dw0&"
            "continue=next");
}

TEST_F(KubeClientTest, ListParsesPage) {
  std::optional<StatusOr<PodList>> result;
  ApiCall call =
      client_.ListPods("default", ListOptions{},
                       [&](StatusOr<PodList> l) { result = std::move(l); });
  EXPECT_EQ(transport_.last().path, "/api/v1/namespaces/default/pods");
  transport_.Respond(
      0, 200,
      R"({"metadata":{"resourceVersion":"9","continue":"c1"},"items":[)" +
          std::string(kPodW0) + "]}");
  ASSERT_THAT(*result, IsOk());
  EXPECT_EQ((*result)->resource_version, "9");
  EXPECT_EQ((*result)->continue_token, "c1");
  EXPECT_THAT((*result)->items, SizeIs(1));
}

TEST_F(KubeClientTest, WatchPathAndStreamedEvents) {
  WatchOptions options;
  options.field_selector = "metadata.name=w0";
  options.resource_version = "42";
  options.timeout_seconds = 300;
  std::vector<WatchEvent> events;
  std::optional<Status> end;
  ApiCall call = client_.WatchPods(
      "default", options, [&](const WatchEvent& e) { events.push_back(e); },
      [&](const Status& s) { end = s; });
  const HttpRequest& r = transport_.last();
  EXPECT_EQ(r.path,
            "/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3Dw0&"
            "resourceVersion=42&allowWatchBookmarks=true&timeoutSeconds=300&"
            "watch=true");
  EXPECT_TRUE(r.streaming);
  EXPECT_GT(r.idle_timeout_ms, 300000);
  transport_.Headers(0, 200);
  std::string stream =
      std::string(R"({"type":"ADDED","object":)") + kPodW0 + "}\n" +
      R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"50"}}})"
      "\n";
  for (size_t i = 0; i < stream.size(); i += 7)
    transport_.Data(0, stream.substr(i, 7));
  EXPECT_THAT(events, SizeIs(2));
  EXPECT_FALSE(end.has_value());
  transport_.Done(0);
  ASSERT_TRUE(end.has_value());
  EXPECT_THAT(*end, IsOk());
}

TEST_F(KubeClientTest, WatchHttp410IsExpired) {
  std::optional<Status> end;
  ApiCall call = client_.WatchPods(
      "default", WatchOptions{}, [](const WatchEvent&) {},
      [&](const Status& s) { end = s; });
  transport_.Respond(0, 410,
                     StatusBody(410, "Expired", "too old resource version"));
  EXPECT_THAT(*end, StatusIs(Code::kExpired));
}

TEST_F(KubeClientTest, WatchMalformedEventEndsWithInternalAndCancels) {
  std::optional<Status> end;
  ApiCall call = client_.WatchPods(
      "default", WatchOptions{}, [](const WatchEvent&) {},
      [&](const Status& s) { end = s; });
  transport_.Headers(0, 200);
  transport_.Data(0, "garbage\n");
  ASSERT_TRUE(end.has_value());
  EXPECT_THAT(*end, StatusIs(Code::kInternal, "garbage"));
  EXPECT_TRUE(transport_.cancelled(0));
}

TEST_F(KubeClientTest, TransportErrorPassesThroughWithContext) {
  std::optional<StatusOr<PodList>> result;
  ApiCall call =
      client_.ListPods("default", ByName("w0"),
                       [&](StatusOr<PodList> l) { result = std::move(l); });
  transport_.Done(0, UnavailableError("Connection refused"));
  EXPECT_THAT(*result, StatusIs(Code::kUnavailable, "Connection refused"));
}

TEST_F(KubeClientTest, DestroyingCallCancelsAndSilences) {
  bool called = false;
  ApiCall call = client_.ListPods("default", ByName("w0"),
                                  [&](StatusOr<PodList>) { called = true; });
  call.reset();
  EXPECT_TRUE(transport_.cancelled(0));
  transport_.Respond(0, 200, kPodW0);
  EXPECT_FALSE(called);
}

TEST_F(KubeClientTest, EventCallbackMayDestroyTheWatch) {
  int events = 0;
  bool ended = false;
  ApiCall call;
  call = client_.WatchPods(
      "default", WatchOptions{},
      [&](const WatchEvent&) {
        ++events;
        call.reset();
      },
      [&](const Status&) { ended = true; });
  transport_.Headers(0, 200);
  std::string ev = std::string(R"({"type":"ADDED","object":)") + kPodW0 + "}\n";
  transport_.Data(0, ev + ev);
  EXPECT_EQ(events, 1);
  EXPECT_FALSE(ended);
  EXPECT_TRUE(transport_.cancelled(0));
}

}  // namespace
}  // namespace k8s_agent::kube
