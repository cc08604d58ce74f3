// SPDX-License-Identifier: Apache-2.0
// k8s-agent-inject: `k8s-agent inject` (launcher/inject_dispatch.cc execs
// it), the manifest injector. A program of its own so that neither its
// code nor yaml-cpp's emitter is part of the k8s-agent that mpirun starts
// on every host (startup time and idle memory per host).

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "build_info.h"  // Generated: cmake/build_info.cmake.
#include "plugin/base/exit_status.h"
#include "plugin/base/log.h"
#include "plugin/base/std_fds.h"
#include "plugin/base/strings.h"
#include "plugin/inject/manifest_injector.h"

namespace k8s_agent {
namespace {

using inject::AgentSettings;

// A manifest is text a person wrote: far below this.
constexpr size_t kMaxInput = 64u << 20;

constexpr char kUsage[] = R"(Usage: k8s-agent inject [options] [FILE...]
       kubectl get -o yaml ... | k8s-agent inject | kubectl apply -f -

Reads Kubernetes manifests (FILE..., or stdin when none or "-"; several
documents separated by ---, and kind: List) and writes them to stdout with
what k8s-agent needs added to each launcher and worker pod template: the
delivery image as an init container copying the agent into an emptyDir,
mounted at --dir in the containers; on launchers OMPI_MCA_plm_rsh_agent
(Open MPI 4) and PRTE_MCA_plm_ssh_agent (Open MPI 5) naming it and
K8S_AGENT_NAMESPACE; and the ServiceAccount, unless the pod names one.
Knows Pod, Job (launcher), StatefulSet (worker), MPIJob, JobSet,
LeaderWorkerSet, TrainingRuntime and ClusterTrainingRuntime; other kinds
pass through unchanged with a warning. Annotate a pod template with
k8s-agent/role: launcher|worker|none to choose its role, and
k8s-agent/containers: a,b to limit which containers get the settings.
Nothing the input has is removed or reordered; running it on its own
output changes nothing. Comments are not kept. Warnings go to stderr.

Options:
  --rbac                    also write the ServiceAccount, a Role with list
                            and watch on pods, and its RoleBinding
  --sshd                    workers run DIR/k8s-agent-sshd (images without
                            an OpenSSH server); MPIJob and Trainer runtimes
                            also get the k8s-agent-ssh ConfigMap
  --image IMAGE             the delivery image (default k8s-agent:)" K8S_AGENT_IMAGE_TAG
                          R"()
  --dir DIR                 where the agent is mounted (default
                            /opt/k8s-agent)
  --service-account NAME    default mpi-launcher
  --sshd-keys DIR           k8s-agent-sshd's --keys outside operators
                            (default /etc/ssh-secret)
  -h, --help                this text
  -V, --version             the version

Exit status: 0, or 255 on unreadable input or YAML that does not parse
(naming the file, the document and the line).
)";

void Write(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

StatusOr<std::string> ReadStdin() {
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("reading stdin", errno);
    if (n == 0) return text;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxInput) {
      return TooLargeError("stdin: over 64 MiB; not a manifest");
    }
  }
}

struct Command {
  inject::InjectOptions options;
  std::vector<std::string> files;
  bool help = false;
  bool version = false;
};

// One option at args[*i] (its value, if separate, at args[*i + 1]).
Status ParseOption(const std::vector<std::string>& args, size_t* i,
                   Command* command) {
  std::string arg = args[*i];
  std::string value;
  bool has_value = false;
  if (arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos) {
    value = arg.substr(arg.find('=') + 1);
    arg = arg.substr(0, arg.find('='));
    has_value = true;
  }
  auto take = [&](std::string* into) {
    if (!has_value && *i + 1 < args.size()) value = args[++*i];
    *into = value;
    if (value.empty()) {
      return InvalidArgumentError(
          arg + " needs a value (see k8s-agent inject --help)");
    }
    return OkStatus();
  };
  AgentSettings& agent = command->options.agent;
  if (arg == "-h" || arg == "--help") {
    command->help = true;
  } else if (arg == "-V" || arg == "--version") {
    command->version = true;
  } else if (arg == "--rbac" && !has_value) {
    command->options.rbac = true;
  } else if (arg == "--sshd" && !has_value) {
    agent.sshd = true;
  } else if (arg == "--image") {
    return take(&agent.image);
  } else if (arg == "--dir") {
    K8S_RETURN_IF_ERROR(take(&agent.dir));
    while (agent.dir.size() > 1 && agent.dir.back() == '/')
      agent.dir.pop_back();
    if (agent.dir[0] != '/') {
      return InvalidArgumentError("--dir " + agent.dir +
                                  ": not an absolute path");
    }
  } else if (arg == "--service-account") {
    return take(&agent.service_account);
  } else if (arg == "--sshd-keys") {
    return take(&agent.sshd_keys);
  } else if (arg == "-" || arg[0] != '-') {
    command->files.push_back(arg);
  } else {
    return InvalidArgumentError(
        "unknown option " + arg +
        " (see k8s-agent inject --help; to run a command on a pod named "
        "inject, put the ssh options before the host)");
  }
  return OkStatus();
}

StatusOr<std::vector<inject::Source>> ReadSources(
    const std::vector<std::string>& files) {
  std::vector<inject::Source> sources;
  for (const std::string& file : files) {
    const std::string name = file == "-" ? "stdin" : file;
    StatusOr<std::string> text =
        file == "-" ? ReadStdin() : ReadFileToString(file, kMaxInput);
    if (!text.ok()) {
      return InvalidArgumentError(name + ": " + text.status().message() +
                                  " (check the file name)");
    }
    sources.push_back({name, std::move(*text)});
  }
  return sources;
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // "k8s-agent inject ..." execs this with "inject" first.
  if (!args.empty() && args[0] == "inject") args.erase(args.begin());
  Command command;
  for (size_t i = 0; i < args.size(); ++i) {
    if (Status parsed = ParseOption(args, &i, &command); !parsed.ok()) {
      LogError("inject: " + parsed.message());
      return kFailureExit;
    }
  }
  if (command.help) {
    Write(STDOUT_FILENO, kUsage);
    return 0;
  }
  if (command.version) {
    // The commit as k8s-agent --version says it: release.sh pairs them.
    Write(STDOUT_FILENO, std::string("k8s-agent-inject " K8S_AGENT_VERSION
                                     "\ncommit " K8S_AGENT_COMMIT) +
                             (K8S_AGENT_COMMIT_DIRTY ? "-dirty" : "") + "\n");
    return 0;
  }
  if (command.files.empty()) command.files.push_back("-");
  StatusOr<std::vector<inject::Source>> sources = ReadSources(command.files);
  if (!sources.ok()) {
    LogError("inject: " + sources.status().message());
    return kFailureExit;
  }
  StatusOr<inject::InjectResult> result =
      inject::InjectManifests(*sources, command.options);
  if (!result.ok()) {
    LogError("inject: " + result.status().message());
    return kFailureExit;
  }
  for (const std::string& warning : result->warnings) {
    LogWarning("inject: " + warning);
  }
  Write(STDOUT_FILENO, result->yaml);
  return 0;
}

}  // namespace
}  // namespace k8s_agent

int main(int argc, char** argv) {
  if (k8s_agent::Status fds = k8s_agent::EnsureStdFdsOpen(); !fds.ok()) {
    k8s_agent::LogError(fds.message());
    return k8s_agent::kFailureExit;
  }
  try {
    return k8s_agent::Main(argc, argv);
  } catch (const std::exception& e) {
    // yaml-cpp throws; every throw it documents is caught where it is
    // called, so this is the standard library's (bad_alloc).
    k8s_agent::LogError(std::string("inject: internal error: ") + e.what());
    return k8s_agent::kFailureExit;
  }
}
