// SPDX-License-Identifier: Apache-2.0
// CurlTransport + KubeClient + PodWatcher against the fake API server (TLS).

#include <curl/curl.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include "plugin/base/strings.h"
#include "plugin/kube/curl_handles.h"
#include "plugin/kube/curl_transport.h"
#include "plugin/kube/kube_client.h"
#include "plugin/kube/pod_watcher.h"
#include "tests/fakes/status_matchers.h"

extern char** environ;

namespace k8s_agent::kube {
namespace {

using ::testing::HasSubstr;

const std::string kSourceDir = K8S_SOURCE_DIR;

// One fake API server per test process (ctest runs each test alone).
class FakeApiServer {
 public:
  static FakeApiServer* Get() {
    static FakeApiServer* server = [] {
      auto* s = new FakeApiServer();
      s->Start();
      return s;
    }();
    return server;
  }

  void Start() {
    char tmpl[] = "/tmp/k8s-kube-it-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    std::string cmd = "bash -c 'source " + kSourceDir +
                      "/tests/fake_apiserver/fake_apiserver_lib.sh && "
                      "fake_apiserver_certs " +
                      dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    std::ofstream(dir_ + "/pods.json")
        << R"([{"name":"w0","phase":"Running","podIP":"10.233.0.10","labels":{"role":"worker"}},
               {"name":"w1","phase":"Pending","labels":{"role":"worker"}}])";
    int out[2];
    ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2,
                                     (dir_ + "/apiserver.log").c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    std::vector<std::string> args = {
        "/usr/bin/python3",
        kSourceDir + "/tests/fake_apiserver/fake_apiserver.py",
        "--bind",
        "127.0.0.1",
        "--port",
        "0",
        "--cert",
        dir_ + "/server.crt",
        "--key",
        dir_ + "/server.key",
        "--token-file",
        dir_ + "/token",
        "--pods",
        dir_ + "/pods.json",
        "--bookmark-interval",
        "1",
        "--log",
        dir_ + "/requests.log"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ASSERT_EQ(
        posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ),
        0);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    // Wait (in poll, bounded) for "READY <port>".
    std::string line;
    Deadline deadline = Deadline::After(RealClock::Get()->Now(), seconds(10));
    while (line.find('\n') == std::string::npos &&
           !deadline.Expired(RealClock::Get()->Now())) {
      pollfd p{out[0], POLLIN, 0};
      if (::poll(&p, 1, 200) <= 0) continue;
      char buf[64];
      ssize_t n = ::read(out[0], buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, n);
    }
    ::close(out[0]);
    ASSERT_TRUE(StartsWith(line, "READY "))
        << "fake apiserver did not start: " << line;
    port_ = std::stoi(line.substr(6));
    std::atexit([] { Get()->Stop(); });
  }

  void Stop() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::string url() const {
    return "https://127.0.0.1:" + std::to_string(port_);
  }
  const std::string& dir() const { return dir_; }

  // Blocking call to the control API (test code; the agent never blocks).
  std::string Control(const std::string& method, const std::string& path,
                      const std::string& body = "") {
    CurlEasy easy(curl_easy_init());
    std::string out;
    std::string ca = dir_ + "/ca.crt";
    std::string url_s = url() + path;
    auto token = ReadFileToString(dir_ + "/token");
    std::string auth = "Authorization: Bearer " + (token.ok() ? *token : "");
    CurlSlist headers(curl_slist_append(nullptr, auth.c_str()));
    curl_easy_setopt(easy.get(), CURLOPT_URL, url_s.c_str());
    curl_easy_setopt(easy.get(), CURLOPT_CAINFO, ca.c_str());
    curl_easy_setopt(easy.get(), CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(easy.get(), CURLOPT_CUSTOMREQUEST, method.c_str());
    if (!body.empty())
      curl_easy_setopt(easy.get(), CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(
        easy.get(), CURLOPT_WRITEFUNCTION,
        +[](char* d, size_t s, size_t n, void* p) {
          static_cast<std::string*>(p)->append(d, s * n);
          return s * n;
        });
    curl_easy_setopt(easy.get(), CURLOPT_WRITEDATA, &out);
    CURLcode rc = curl_easy_perform(easy.get());
    long code = 0;
    curl_easy_getinfo(easy.get(), CURLINFO_RESPONSE_CODE, &code);
    EXPECT_EQ(rc, CURLE_OK) << curl_easy_strerror(rc);
    EXPECT_EQ(code, 200) << method << " " << path << ": " << out;
    return out;
  }

 private:
  std::string dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

class KubeIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = FakeApiServer::Get();
    ASSERT_NE(server_, nullptr);
    // The client reads its own copy of the token, so tests can make it
    // differ from the server's.
    client_token_ =
        server_->dir() + "/client-token-" +
        ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::copy_file(
        server_->dir() + "/token", client_token_,
        std::filesystem::copy_options::overwrite_existing);
    config_.server = server_->url();
    config_.ca_file = server_->dir() + "/ca.crt";
    config_.token_file = client_token_;
    config_.ns = "default";
  }

  void Connect() {
    auto transport = CurlTransport::Create(config_, RealClock::Get());
    ASSERT_THAT(transport, IsOk());
    transport_ = std::move(transport).value();
    client_ = std::make_unique<KubeClient>(transport_.get(), config_);
    loop_.Add(transport_.get());
  }

  // Runs the loop until `done` or 10 s; false on timeout.
  bool RunUntil(const std::function<bool()>& done,
                Duration limit = seconds(10)) {
    Deadline deadline = Deadline::After(RealClock::Get()->Now(), limit);
    Status s = loop_.RunUntil(
        [&] { return done() || deadline.Expired(RealClock::Get()->Now()); });
    EXPECT_THAT(s, IsOk());
    return done();
  }

  // Lists pods by name, as the agent looks a host's pod up.
  StatusOr<PodList> ListByName(const std::string& name) {
    ListOptions options;
    options.field_selector = "metadata.name=" + name;
    std::optional<StatusOr<PodList>> result;
    ApiCall call =
        client_->ListPods("default", options,
                          [&](StatusOr<PodList> l) { result = std::move(l); });
    if (!RunUntil([&] { return result.has_value(); })) {
      return DeadlineExceededError("no answer");
    }
    return *result;
  }

  // The one pod ListByName finds; kNotFound when it finds none.
  StatusOr<Pod> Get(const std::string& name) {
    K8S_ASSIGN_OR_RETURN(PodList list, ListByName(name));
    if (list.items.size() != 1) {
      return NotFoundError(std::to_string(list.items.size()) + " pods named " +
                           name);
    }
    return list.items[0];
  }

  std::unique_ptr<PodWatcher> Watcher(const std::string& name) {
    auto w = std::make_unique<PodWatcher>(
        client_.get(), RealClock::Get(), "default", name,
        [this] { ++changes_; }, 1234);
    loop_.Add(w.get());
    return w;
  }

  void TearDown() override {
    for (auto* p : {static_cast<Pollable*>(transport_.get())}) loop_.Remove(p);
  }

  FakeApiServer* server_ = nullptr;
  std::string client_token_;
  ClusterConfig config_;
  EventLoop loop_{RealClock::Get()};
  std::unique_ptr<CurlTransport> transport_;
  std::unique_ptr<KubeClient> client_;
  int changes_ = 0;
};

TEST_F(KubeIntegrationTest, ListByNameAndNoMatchReuseOneConnection) {
  Connect();
  auto pod = Get("w0");
  ASSERT_THAT(pod, IsOk());
  EXPECT_EQ(pod->phase, "Running");
  EXPECT_EQ(pod->pod_ip, "10.233.0.10");
  EXPECT_TRUE(pod->ready);
  StatusOr<PodList> none = ListByName("nope");
  ASSERT_THAT(none, IsOk());
  EXPECT_TRUE(none->items.empty());
  EXPECT_EQ(transport_->connections_opened(), 1);
  EXPECT_EQ(transport_->active_requests(), 0u);
  EXPECT_LT(loop_.zero_timeout_streak(), 3);  // No busy loop.
}

TEST_F(KubeIntegrationTest, ListWithSelectorsAndPaging) {
  for (const char* name : {"page-a", "page-b", "page-c"}) {
    server_->Control("PUT", std::string("/_control/pods/default/") + name,
                     R"({"phase":"Running","labels":{"app":"page"}})");
  }
  server_->Control("PUT", "/_control/pods/default/page-d",
                   R"({"phase":"Pending","labels":{"app":"other"}})");
  Connect();
  ListOptions options;
  options.label_selector = "app=page";
  options.limit = 2;
  std::vector<std::string> names;
  std::string cont;
  int pages = 0;
  do {
    options.continue_token = cont;
    std::optional<StatusOr<PodList>> result;
    ApiCall call =
        client_->ListPods("default", options,
                          [&](StatusOr<PodList> l) { result = std::move(l); });
    ASSERT_TRUE(RunUntil([&] { return result.has_value(); }));
    ASSERT_THAT(*result, IsOk());
    for (const Pod& p : (*result)->items) names.push_back(p.name);
    cont = (*result)->continue_token;
    ++pages;
  } while (!cont.empty() && pages < 5);
  EXPECT_EQ(pages, 2);
  EXPECT_THAT(names, ::testing::ElementsAre("page-a", "page-b", "page-c"));

  ListOptions by_field;
  by_field.field_selector = "metadata.name=page-d";
  std::optional<StatusOr<PodList>> result;
  ApiCall call = client_->ListPods(
      "default", by_field, [&](StatusOr<PodList> l) { result = std::move(l); });
  ASSERT_TRUE(RunUntil([&] { return result.has_value(); }));
  ASSERT_THAT(*result, IsOk());
  ASSERT_EQ((*result)->items.size(), 1u);
  EXPECT_EQ((*result)->items[0].phase, "Pending");
}

TEST_F(KubeIntegrationTest, WatchSeesPendingToRunning) {
  server_->Control("PUT", "/_control/pods/default/pw",
                   R"({"phase":"Pending"})");
  Connect();
  auto pod = Get("pw");
  ASSERT_THAT(pod, IsOk());
  auto watcher = Watcher("pw");
  watcher->Start(*pod, pod->resource_version, RealClock::Get()->Now());
  ASSERT_TRUE(RunUntil([&] { return transport_->sockets() > 0; }));
  server_->Control("PUT", "/_control/pods/default/pw",
                   R"({"phase":"Running","podIP":"10.233.0.99"})");
  ASSERT_TRUE(RunUntil(
      [&] { return watcher->pod() && watcher->pod()->phase == "Running"; }));
  EXPECT_EQ(watcher->pod()->pod_ip, "10.233.0.99");
  EXPECT_EQ(watcher->lists_started(), 0);
  EXPECT_EQ(watcher->watches_started(), 1);
  // The GET's connection carried the WATCH too.
  EXPECT_LT(loop_.zero_timeout_streak(), 3);  // No busy loop.
  watcher->Stop();
  loop_.Remove(watcher.get());
}

TEST_F(KubeIntegrationTest, CleanServerTimeoutResumesOnSameConnection) {
  Connect();
  auto pod = Get("w0");
  ASSERT_THAT(pod, IsOk());
  auto watcher = Watcher("w0");
  watcher->set_min_watch_timeout(seconds(1));  // timeoutSeconds=1.
  watcher->Start(*pod, pod->resource_version, RealClock::Get()->Now());
  ASSERT_TRUE(RunUntil([&] { return watcher->watches_started() >= 2; }));
  EXPECT_EQ(watcher->lists_started(), 0);
  EXPECT_EQ(watcher->state(), PodWatcher::State::kWatching);
  // GET and the finished watch shared one TLS connection.
  EXPECT_EQ(transport_->connections_opened(), 1);
  watcher->Stop();
  loop_.Remove(watcher.get());
}

TEST_F(KubeIntegrationTest, ExpiredResourceVersionRelists) {
  for (const char* mode : {"event", "http"}) {
    server_->Control(
        "POST", "/_control/faults",
        std::string(R"({"compact":true,"expired_mode":")") + mode + "\"}");
    Connect();
    auto watcher = Watcher("w0");
    watcher->Start(std::nullopt, "1", RealClock::Get()->Now());
    ASSERT_TRUE(RunUntil([&] {
      return watcher->lists_started() == 1 &&
             watcher->state() == PodWatcher::State::kWatching && watcher->pod();
    })) << mode;
    EXPECT_EQ(watcher->watches_started(), 2) << mode;
    EXPECT_EQ(watcher->pod()->phase, "Running");
    watcher->Stop();
    loop_.Remove(watcher.get());
    loop_.Remove(transport_.get());
  }
  server_->Control("POST", "/_control/faults", R"({"expired_mode":"event"})");
}

TEST_F(KubeIntegrationTest, TooManyRequestsHonoursRetryAfter) {
  server_->Control(
      "POST", "/_control/faults",
      R"({"status":429,"count":1,"retry_after":1,"method":"WATCH"})");
  Connect();
  auto watcher = Watcher("w0");
  TimePoint start = RealClock::Get()->Now();
  watcher->Start(std::nullopt, "101", start);
  ASSERT_TRUE(RunUntil([&] { return watcher->watches_started() == 2; }));
  EXPECT_GE(RealClock::Get()->Now() - start, milliseconds(950));
  EXPECT_EQ(watcher->lists_started(), 0);
  EXPECT_EQ(watcher->state(), PodWatcher::State::kWatching);
  watcher->Stop();
  loop_.Remove(watcher.get());
}

TEST_F(KubeIntegrationTest, DroppedWatchResumesFromSameRv) {
  server_->Control("PUT", "/_control/pods/default/dw",
                   R"({"phase":"Pending"})");
  Connect();
  auto pod = Get("dw");
  ASSERT_THAT(pod, IsOk());
  auto watcher = Watcher("dw");
  watcher->Start(*pod, pod->resource_version, RealClock::Get()->Now());
  ASSERT_TRUE(RunUntil([&] { return transport_->sockets() > 0; }));
  RunUntil([] { return false; }, milliseconds(200));  // Let the watch open.
  server_->Control("POST", "/_control/faults", R"({"drop_watches":true})");
  ASSERT_TRUE(RunUntil([&] { return watcher->watches_started() >= 2; }));
  server_->Control("PUT", "/_control/pods/default/dw",
                   R"({"phase":"Running","podIP":"10.233.0.50"})");
  ASSERT_TRUE(RunUntil(
      [&] { return watcher->pod() && watcher->pod()->phase == "Running"; }));
  EXPECT_EQ(watcher->lists_started(), 0);
  watcher->Stop();
  loop_.Remove(watcher.get());
}

TEST_F(KubeIntegrationTest, TokenRotationMidWatchReloadsAfter401) {
  Connect();
  auto pod = Get("w0");
  ASSERT_THAT(pod, IsOk());
  auto watcher = Watcher("w0");
  watcher->Start(*pod, pod->resource_version, RealClock::Get()->Now());
  RunUntil([] { return false; }, milliseconds(300));
  // Rotate: the server accepts only the new token. The client's file gets
  // the new token too but keeps its old size and mtime, so only the 401
  // path (InvalidateToken) can make the client re-read it.
  std::string old_token = *ReadFileToString(client_token_);
  std::string new_token = old_token;
  new_token[new_token.size() - 1] = new_token.back() == 'a' ? 'b' : 'a';
  struct stat before;
  ASSERT_EQ(::stat(client_token_.c_str(), &before), 0);
  std::ofstream(server_->dir() + "/token.new") << new_token;
  std::filesystem::rename(server_->dir() + "/token.new",
                          server_->dir() + "/token");
  {
    std::fstream f(client_token_, std::ios::in | std::ios::out);
    f << new_token;
  }
  timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, client_token_.c_str(), times, 0), 0);
  server_->Control("POST", "/_control/faults", R"({"drop_watches":true})");
  ASSERT_TRUE(RunUntil([&] { return watcher->watches_started() >= 3; }));
  RunUntil([] { return false; }, milliseconds(300));
  EXPECT_EQ(watcher->state(), PodWatcher::State::kWatching)
      << watcher->error().ToString();
  server_->Control("PUT", "/_control/pods/default/w0",
                   R"({"podIP":"10.233.0.77"})");
  ASSERT_TRUE(
      RunUntil([&] { return watcher->pod()->pod_ip == "10.233.0.77"; }));
  watcher->Stop();
  loop_.Remove(watcher.get());
}

TEST_F(KubeIntegrationTest, WrongCaIsClearX509Error) {
  config_.ca_file = server_->dir() + "/other-ca.crt";
  Connect();
  auto pod = Get("w0");
  EXPECT_THAT(pod, StatusIs(Code::kFailedPrecondition, "x509"));
  EXPECT_THAT(pod.status().message(), HasSubstr("certificate"));
  EXPECT_THAT(pod.status().message(), HasSubstr("--certificate-authority"));
}

TEST_F(KubeIntegrationTest, WrongTokenIsUnauthenticated) {
  std::ofstream(client_token_) << "not-the-token";
  Connect();
  auto pod = Get("w0");
  EXPECT_THAT(pod, StatusIs(Code::kUnauthenticated, "token file"));
  EXPECT_THAT(pod.status().message(),
              ::testing::Not(HasSubstr("not-the-token")));
}

TEST_F(KubeIntegrationTest, ServerFaultsAreClassified) {
  server_->Control("POST", "/_control/stats/reset");
  Connect();
  server_->Control("POST", "/_control/faults",
                   R"({"status":500,"count":1,"method":"LIST"})");
  EXPECT_THAT(Get("w0"), StatusIs(Code::kUnavailable));
  server_->Control("POST", "/_control/faults",
                   R"({"status":403,"count":1,"method":"LIST"})");
  EXPECT_THAT(Get("w0"),
              StatusIs(Code::kPermissionDenied, "cannot \"list\" \"pods\""));
  EXPECT_THAT(Get("w0"), IsOk());
  std::string stats = server_->Control("GET", "/_control/stats");
  EXPECT_THAT(stats, HasSubstr("\"LIST /api/v1/namespaces/default/pods\": 3"));
}

}  // namespace
}  // namespace k8s_agent::kube
