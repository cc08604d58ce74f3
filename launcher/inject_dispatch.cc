// SPDX-License-Identifier: Apache-2.0
// Why exec and not link: k8s-agent is started by mpirun once per host, and
// its start-up cost and idle memory are measured (docs/performance.md).
// The injector (yaml-cpp's emitter, the workload rules) would add code to
// every one of those processes for a command a person runs once per job.
// The dispatch costs one string compare on the launch path; the exec only
// happens for `k8s-agent inject`.

#include "launcher/inject_dispatch.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "plugin/base/exit_status.h"
#include "plugin/base/files.h"
#include "plugin/base/log.h"
#include "plugin/base/status.h"

namespace k8s_agent {
namespace {

bool EndsWith(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

}  // namespace

bool IsInjectCommand(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "inject") != 0) return false;
  if (argc == 2) return true;
  const std::string next = argv[2];
  return next[0] == '-' || EndsWith(next, ".yaml") || EndsWith(next, ".yml") ||
         EndsWith(next, ".json");
}

int ExecInject(char** argv) {
  StatusOr<std::string> dir = SelfExeDir();
  if (!dir.ok()) {
    LogError("inject: finding k8s-agent-inject: " + dir.status().message());
    return kFailureExit;
  }
  const std::string program = JoinPath(*dir, "k8s-agent-inject");
  argv[0] = const_cast<char*>(program.c_str());
  ::execv(program.c_str(), argv);
  LogError("inject: cannot run " + program + ": " + std::strerror(errno) +
           " (install k8s-agent-inject beside k8s-agent)");
  return kFailureExit;
}

}  // namespace k8s_agent
