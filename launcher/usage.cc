// SPDX-License-Identifier: Apache-2.0
// The --help text: prose here, every option's line from the tables in
// option_table.h, so --help lists exactly the options the parser takes.

#include <algorithm>
#include <string>

#include "build_info.h"  // Generated: cmake/build_info.cmake.
#include "launcher/option_table.h"
#include "launcher/options.h"
#include "plugin/agent/fatal_reasons.h"
#include "plugin/base/strings.h"
#include "plugin/base/usage_text.h"

namespace k8s_agent {
namespace {

// Each raw string starts with a newline, so its text starts in the first
// column of the source as it does on the screen; Paragraph() drops it.
constexpr char kIntro[] = R"(
Usage: k8s-agent [options] [user@]HOST [options] COMMAND-WORD...
       k8s-agent [options] --wait-only HOST...
       k8s-agent [options] --hostfile [--selector LABELS]
       k8s-agent --report [--format json] [--svg F] [--chrome F] TRACE...
       k8s-agent inject [--rbac] [--sshd] [FILE...] (k8s-agent inject --help)
       k8s-agent --help (-h) | --version (-V)

Runs a command on the Kubernetes pod named HOST over SSH, as ssh would,
but first waits (watching the pods API) until the pod is Running with an IP
and its sshd completes a handshake. Made to be Open MPI's plm_rsh_agent and
MPICH hydra's launcher. The command words are joined with single spaces and
run by the remote login shell, as ssh does. stdout carries only the remote
command's output; k8s-agent's own messages go to stderr.

HOST is a pod name; a DNS name such as w-0.workers.ns.svc.cluster.local
(first label = pod, second = headless Service, third = namespace unless
--namespace is given); a pod's spec.hostname; or a pod IP. Options may
come before HOST and right after it; the first word after HOST that is not
an option starts the command. "--" ends the options.

Exit status: the remote command's; 128+N when it died of signal N
(ssh gives 255 there); 255 when k8s-agent itself fails (pod failed or
never ready before --timeout, SSH refused, bad usage).

)";

constexpr char kEnvironmentTail[] = R"(
  K8S_AGENT_CONFIG                    the config file (see below)
  KUBECONFIG                          kubeconfig when --kubeconfig is unset
  KUBERNETES_SERVICE_HOST, _PORT      in-cluster API server address
Booleans take 1/0, true/false, yes/no, on/off; K8S_AGENT_VERBOSE takes 0, 1
or 2.

)";

// Wrapped with the command-line-only list, which comes from the table.
constexpr char kConfigFile[] =
    "Config file (--config, else $K8S_AGENT_CONFIG, else "
    "/etc/k8s-agent.conf; the default file may be absent, a named one "
    "must exist): one name=value per line, with the long option's name "
    "(token-file=/var/run/token) or its variable's "
    "(K8S_AGENT_TOKEN_FILE=/var/run/token); optional quotes around the "
    "value; whole-line # comments and blank lines are skipped; an unknown "
    "name is an error.";

constexpr char kOpenMpiReportExamples[] = R"(
Under Open MPI: the agent string (plm_rsh_agent) is split on ':' and on
spaces with no quoting, so option values there must hold neither: "k8s-agent
--server=https://k:6443" arrives as "--server=https". Put such values in
K8S_AGENT_* variables or the config file. Under tree spawn (more than 64
hosts) orted runs k8s-agent on worker pods, under sshd, without the pod's
environment: give those pods the config file (or rely on the in-cluster
service account).

Launch report (--report): trace times are the agent's clock; pod_status lines
carry the pod's creationTimestamp, condition lastTransitionTimes and container
startedAt as the API server, scheduler and kubelet wrote them: their clocks,
whole seconds. A pod time is placed no later than the agent first saw it; a
later one means that clock is ahead of the agent's and is reported as clock
skew. A clock that is behind only makes a phase look longer. Exit 0 even when
hosts failed (the report names them); 255 for unreadable or empty traces.

Examples:
  mpirun --mca plm_rsh_agent "k8s-agent --timeout=5m" -H w-0,w-1 ./app
  OMPI_MCA_plm_rsh_agent=k8s-agent PRTE_MCA_plm_ssh_agent=k8s-agent mpirun ...
  k8s-agent --wait-only --timeout 5m w-0 w-1 w-2
  k8s-agent --hostfile --selector role=worker --slots 4 > hostfile
  k8s-agent --hostfile --selector role=worker --wait-for-count 8 --ssh-ready \
      --slots-from-resource nvidia.com/gpu --timeout 5m > hostfile
  horovodrun --host-discovery-script ./discover.sh ...  (discover.sh: exec
      k8s-agent --hostfile --format horovod --selector role=worker --slots 4)
  k8s-agent --report --svg launch.svg --chrome launch.json trace.jsonl w-*.jsonl
)";

std::string ShortFlagLines() {
  std::string out;
  std::string ignored;
  std::string refused;
  for (const ShortFlag& f : ShortFlags()) {
    if (f.help != nullptr) {
      out += HelpLine(f.head, f.help);
    } else if (f.refused) {
      if (!refused.empty()) refused += ' ';
      refused += std::string("-") + f.flag;
    } else {
      if (!ignored.empty()) ignored += ' ';
      ignored += std::string("-") + f.flag;
    }
  }
  if (!ignored.empty()) out += HelpLine(ignored, "accepted and ignored");
  if (!refused.empty()) {
    out += HelpLine(refused,
                    "refused, saying why: jump hosts, forwarding, tunnels, "
                    "connection sharing, background and subsystem modes, "
                    "PKCS#11 and interface binding have no place in a launch "
                    "to a pod IP");
  }
  return out;
}

std::string LongOptionLines() {
  std::string out;
  for (const LongOption& opt : LongOptions()) {
    std::string head = std::string("--") + opt.name;
    if (opt.arg != nullptr) head += std::string(" ") + opt.arg;
    std::string help = opt.help;
    constexpr std::string_view kReasons = "@DEFAULT_REASONS@";
    size_t pos = help.find(kReasons);
    if (pos != std::string::npos) {
      help.replace(pos, kReasons.size(), Join(DefaultFatalReasons(), ", "));
    }
    out += HelpLine(head, help);
  }
  return out;
}

std::string EnvironmentLines() {
  std::string out;
  for (const LongOption& opt : LongOptions()) {
    if (!opt.settable()) continue;
    std::string line = "  " + EnvName(opt);
    line.resize(std::max<size_t>(line.size() + 1, 38), ' ');
    out += line + "--" + opt.name + "\n";
  }
  return out;
}

/// One of the raw strings above without its leading newline.
std::string Paragraph(const char* raw) { return raw + 1; }

/// The config file paragraph, with the command-line-only options named
/// from the table.
std::string ConfigFileText() {
  std::string names;
  for (const LongOption& opt : LongOptions()) {
    if (opt.settable()) continue;
    if (!names.empty()) names += ", ";
    names += std::string("--") + opt.name;
  }
  return WrapText(
             std::string(kConfigFile) + " Command-line only: " + names +
                 ". Precedence: command line, then environment, then file.",
             0) +
         "\n";
}

}  // namespace

std::string UsageText() {
  return Paragraph(kIntro) +
         "ssh options (as ssh takes them; the first value given wins):\n" +
         ShortFlagLines() +
         "Flags combine (-qx) and values may be attached (-p2222, "
         "-oBatchMode=yes).\n"
         "\n"
         "k8s-agent options (--name VALUE or --name=VALUE; the last one given "
         "wins):\n" +
         LongOptionLines() +
         "\n"
         "Environment (used when the option is not on the command line; "
         "empty = unset):\n" +
         EnvironmentLines() + Paragraph(kEnvironmentTail) + ConfigFileText() +
         "\n" + Paragraph(kOpenMpiReportExamples);
}

std::string VersionText() {
  std::string commit = K8S_AGENT_COMMIT;
  if (K8S_AGENT_COMMIT_DIRTY) commit += "-dirty";
  return std::string("k8s-agent ") + K8S_AGENT_VERSION + "\ncommit " + commit +
         " (" + K8S_AGENT_COMMIT_DATE + ")\n";
}

}  // namespace k8s_agent
