// SPDX-License-Identifier: Apache-2.0
// Captures what the code under test logs, for asserting on messages.

#ifndef K8S_AGENT_TESTS_FAKES_LOG_CAPTURE_H_
#define K8S_AGENT_TESTS_FAKES_LOG_CAPTURE_H_

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include "plugin/base/log.h"

namespace k8s_agent {

// Runs `body` with the log going to a temporary file (a real fd, as the
// logger writes with write(2)); returns what was logged. The log goes back
// to stderr afterwards.
template <typename F>
std::string CaptureLog(F body) {
  char path[] = "/tmp/k8s-agent-test-log-XXXXXX";
  int fd = ::mkstemp(path);
  SetLogFd(fd);
  body();
  SetLogFd(2);
  ::close(fd);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  ::unlink(path);
  return text;
}

}  // namespace k8s_agent

#endif  // K8S_AGENT_TESTS_FAKES_LOG_CAPTURE_H_
