// SPDX-License-Identifier: Apache-2.0
// CurlTransport without a server: setup errors and a refused connection.

#include "plugin/kube/curl_transport.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "plugin/base/unique_fd.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent::kube {
namespace {

using ::testing::HasSubstr;

class RecordingSink : public HttpSink {
 public:
  void OnHeaders(int status,
                 const std::map<std::string, std::string>&) override {
    http_status = status;
  }
  void OnData(std::string_view bytes) override { body.append(bytes); }
  void OnDone(const Status& status) override { done = status; }
  int http_status = 0;
  std::string body;
  std::optional<Status> done;
};

TEST(CurlTransportTest, MissingCaFileFailsAtCreate) {
  ClusterConfig c;
  c.server = "https://127.0.0.1:1";
  c.ca_file = "/nonexistent/ca.crt";
  EXPECT_THAT(CurlTransport::Create(c, RealClock::Get()),
              StatusIs(Code::kFailedPrecondition, "/nonexistent/ca.crt"));
}

TEST(CurlTransportTest, MissingTokenFileFailsAtCreate) {
  ClusterConfig c;
  c.server = "https://127.0.0.1:1";
  c.token_file = "/nonexistent/token";
  EXPECT_THAT(CurlTransport::Create(c, RealClock::Get()),
              StatusIs(Code::kUnauthenticated, "/nonexistent/token"));
}

// The first-answer budget the agent passes widens the stall window, never
// narrows it below 30 s, in whole seconds (curl's unit). The agent test
// agent.api_liveness.list-first-byte-late runs a LIST late by 33 s.
TEST(CurlTransportTest, RequestStallFollowsTheFirstAnswerBudget) {
  ClusterConfig c;
  c.server = "https://127.0.0.1:1";
  auto t = CurlTransport::Create(c, RealClock::Get());
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ((*t)->request_stall(), std::chrono::seconds(30));
  (*t)->set_request_stall(std::chrono::seconds(5));
  EXPECT_EQ((*t)->request_stall(), std::chrono::seconds(30));
  (*t)->set_request_stall(std::chrono::milliseconds(70001));
  EXPECT_EQ((*t)->request_stall(), std::chrono::seconds(71));
}

TEST(CurlTransportTest, RefusedConnectionIsUnavailableFromTheLoop) {
  // A bound socket that does not listen: connecting to it is refused.
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr),
            0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len),
            0);

  ClusterConfig c;
  c.server = "https://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  auto transport = CurlTransport::Create(c, RealClock::Get());
  ASSERT_THAT(transport, IsOk());
  EventLoop loop(RealClock::Get());
  loop.Add(transport->get());
  RecordingSink sink;
  HttpRequest request;
  request.path = "/api";
  auto call = (*transport)->Start(request, &sink);
  EXPECT_FALSE(sink.done.has_value());  // Never from inside Start().
  Deadline deadline = Deadline::After(RealClock::Get()->Now(), seconds(10));
  ASSERT_THAT(loop.RunUntil([&] {
    return sink.done.has_value() || deadline.Expired(RealClock::Get()->Now());
  }),
              IsOk());
  ASSERT_TRUE(sink.done.has_value());
  EXPECT_THAT(*sink.done,
              StatusIs(Code::kUnavailable, "GET https://127.0.0.1:"));
  EXPECT_EQ((*transport)->active_requests(), 0u);
  EXPECT_EQ(loop.zero_timeout_streak(), 0);
}

TEST(CurlTransportTest, CancelBeforeCompletionSilencesSink) {
  ClusterConfig c;
  c.server = "https://127.0.0.1:1";
  auto transport = CurlTransport::Create(c, RealClock::Get());
  ASSERT_THAT(transport, IsOk());
  RecordingSink sink;
  auto call = (*transport)->Start(HttpRequest{}, &sink);
  EXPECT_EQ((*transport)->active_requests(), 1u);
  call.reset();
  EXPECT_EQ((*transport)->active_requests(), 0u);
  (*transport)->OnTimer(RealClock::Get()->Now());
  EXPECT_FALSE(sink.done.has_value());
}

TEST(CurlTransportTest, RequestsWaitForTheExecPluginThenGetItsAnswer) {
  // Given an exec plugin that fails, expect Create to return while it
  // runs, the request to wait unsent, and then to end with the plugin's
  // error from the loop; a second request runs the plugin again.
  char tmpl[] = "/tmp/k8s-transport-exec-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  std::string plugin = dir + "/plugin";
  {
    std::ofstream(plugin) << "#!/bin/sh\necho $$ >> " << dir
                          << "/runs\necho 'login needed' >&2\nexit 3\n";
  }
  std::filesystem::permissions(plugin, std::filesystem::perms::owner_all);
  ClusterConfig c;
  c.server = "https://127.0.0.1:1";
  c.exec.api_version = kExecApiV1;
  c.exec.command = plugin;
  c.exec.interactive_mode = "Never";
  c.exec.where = "KC: user \"u\"";
  auto transport = CurlTransport::Create(c, RealClock::Get());
  ASSERT_THAT(transport, IsOk());
  StatusOr<bool> ready = (*transport)->CredentialReady(RealClock::Get()->Now());
  ASSERT_THAT(ready.status(), IsOk());
  EXPECT_FALSE(*ready) << "the plugin's pipes were not read yet";
  EXPECT_THAT((*transport)->CredentialWait(RealClock::Get()->Now()),
              HasSubstr("exec plugin " + plugin + " (KC: user \"u\")"));
  EventLoop loop(RealClock::Get());
  loop.Add(transport->get());
  RecordingSink sink;
  auto call = (*transport)->Start(HttpRequest{}, &sink);
  ASSERT_THAT(loop.RunUntil([&] { return sink.done.has_value(); }), IsOk());
  EXPECT_THAT(*sink.done, StatusIs(Code::kFailedPrecondition,
                                   plugin + " exited with status 3: \"login "
                                            "needed\""));
  RecordingSink again;
  auto second = (*transport)->Start(HttpRequest{}, &again);
  ASSERT_THAT(loop.RunUntil([&] { return again.done.has_value(); }), IsOk());
  EXPECT_THAT(*again.done, StatusIs(Code::kFailedPrecondition, "status 3"));
  std::ifstream runs(dir + "/runs");
  int n = 0;
  for (std::string line; std::getline(runs, line);) ++n;
  EXPECT_EQ(n, 2);
  EXPECT_EQ(loop.zero_timeout_streak(), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace k8s_agent::kube
