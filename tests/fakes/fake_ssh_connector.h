// SPDX-License-Identifier: Apache-2.0
// An SshConnector whose attempts the test scripts: refuse, succeed, hang.

#ifndef K8S_AGENT_TESTS_FAKES_FAKE_SSH_CONNECTOR_H_
#define K8S_AGENT_TESTS_FAKES_FAKE_SSH_CONNECTOR_H_

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "plugin/ssh/ssh_client.h"

namespace k8s_agent::ssh {

/// A connection whose state the test sets. It never touches a socket.
class FakeConnection : public SshConnection {
 public:
  struct Shared {
    State state = State::kConnecting;
    Status status;
    bool destroyed = false;
    std::string ip;
    int port = 0;  // The settings the attempt was made with.
    std::string user;
    std::string command;
    bool refused = false;
    bool connect_failed = false;  // Failed before TCP was up, not refused.
    bool started = false;         // Exec() was called: the command "runs".
  };
  explicit FakeConnection(std::shared_ptr<Shared> s) : s_(std::move(s)) {}
  ~FakeConnection() override { s_->destroyed = true; }

  State state() const override { return s_->state; }
  const Status& status() const override { return s_->status; }
  bool refused() const override { return s_->refused; }
  bool connect_failed() const override {
    return s_->refused || s_->connect_failed;
  }
  Status Exec(const std::string& command, StdioFds) override {
    s_->command = command;
    s_->state = State::kRunning;
    s_->started = true;
    return OkStatus();
  }
  bool command_started() const override { return s_->started; }
  const ExitResult& exit_result() const override { return exit_; }
  void Signal(const std::string&) override {}
  void CollectFds(std::vector<pollfd>*) override {}
  TimePoint NextWake() const override { return TimePoint::max(); }
  void OnFdReady(int, short, TimePoint) override {}
  void OnTimer(TimePoint) override {}

 private:
  std::shared_ptr<Shared> s_;
  ExitResult exit_;
};

/// Hands out FakeConnections. Each attempt takes the next scripted
/// outcome (a state and status); with none left it stays kConnecting
/// until the test changes `attempts[i]->state`.
class FakeSshConnector : public SshConnector {
 public:
  struct Outcome {
    SshConnection::State state;
    Status status;
    bool refused = false;
  };
  std::deque<Outcome> script;
  std::vector<std::shared_ptr<FakeConnection::Shared>> attempts;

  void Refuse(int times) {
    for (int i = 0; i < times; ++i) {
      script.push_back({SshConnection::State::kFailed,
                        UnavailableError("connect: Connection refused"), true});
    }
  }
  void Succeed() { script.push_back({SshConnection::State::kReady, {}}); }

  std::unique_ptr<SshConnection> Connect(const ResolvedSshOptions& options,
                                         const std::string& ip,
                                         TimePoint) override {
    auto shared = std::make_shared<FakeConnection::Shared>();
    shared->ip = ip;
    shared->port = options.port;
    shared->user = options.user;
    if (!script.empty()) {
      shared->state = script.front().state;
      shared->status = script.front().status;
      shared->refused = script.front().refused;
      script.pop_front();
    }
    attempts.push_back(shared);
    return std::make_unique<FakeConnection>(shared);
  }
};

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_TESTS_FAKES_FAKE_SSH_CONNECTOR_H_
