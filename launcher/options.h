// SPDX-License-Identifier: Apache-2.0
// The ssh-compatible command line of k8s-agent, merged with env and config.

#ifndef K8S_AGENT_LAUNCHER_OPTIONS_H_
#define K8S_AGENT_LAUNCHER_OPTIONS_H_

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "plugin/base/clock.h"
#include "plugin/base/status.h"
#include "plugin/kube/cluster_config.h"
#include "plugin/ssh/ssh_config.h"
#include "plugin/ssh/ssh_options.h"

namespace k8s_agent {

/// Where the config file is looked for when K8S_AGENT_CONFIG is unset.
inline constexpr char kDefaultConfigPath[] = "/etc/k8s-agent.conf";

/// --wait-for: when a host's pod counts as started.
enum class WaitFor {
  kRunning,  ///< Phase Running with a pod IP.
  kReady,    ///< That, and the Ready condition.
};

/// --format: what --hostfile or --report prints.
enum class OutputFormat {
  kOpenMpi,  ///< --hostfile: "NAME slots=N" (the default).
  kHorovod,  ///< --hostfile: "NAME:N", for horovodrun's discovery script.
  kText,     ///< --report: for people (the default).
  kJson,     ///< --report: for tools.
};

/// "openmpi", "horovod", "text", "json": as --format takes them.
const char* FormatName(OutputFormat format);

/// Everything the command line, the K8S_AGENT_* environment and the config
/// file asked for, merged (flags, then env, then file) and validated.
struct Options {
  bool help = false;     ///< --help: print UsageText() and exit 0.
  bool version = false;  ///< --version: print VersionText() and exit 0.

  /// HOST without "user@" (the user went to ssh.user). Not validated
  /// beyond "non-empty": the agent layer checks DNS-1123 / IP syntax.
  std::string host;
  /// Every HOST: {host} normally; all positional words with --wait-only.
  std::vector<std::string> hosts;
  /// The option words, before HOST and after it, exactly as received: what
  /// a launch tree hands down (launcher/tree_settings.h).
  std::vector<std::string> option_words;
  /// The words after HOST, exactly as received.
  std::vector<std::string> command_words;
  /// command_words joined with single spaces, as ssh does (a leading space
  /// in the first word, as Open MPI sends " orted", is kept).
  std::string command;

  /// -p, -l, user@HOST, -i, -o, -n. First value wins, as in ssh.
  ssh::SshOptions ssh;
  int verbosity = 0;   ///< 0 normal, 1 -v, 2 -vv (and more).
  bool quiet = false;  ///< -q: no progress lines, errors only.

  kube::ClusterOverrides cluster;  ///< --namespace --kubeconfig --server ...
  std::string selector;            ///< --selector: label selector.
  Duration timeout = std::chrono::minutes(10);  ///< --timeout, per host.
  /// --api-first-answer-timeout: an API server that never answered fails
  /// the wait this soon (a wrong --server is not a slow pod).
  Duration api_first_answer_timeout = std::chrono::seconds(30);
  /// --watch-idle-timeout: a watch with no event for this long is dead.
  Duration watch_idle_timeout = std::chrono::seconds(90);
  /// --lookup-cache: the age up to which a shared namespace list answers a
  /// lookup; 0 = every agent asks the API server.
  Duration lookup_cache{};
  std::string trace_file;                ///< --trace FILE.
  WaitFor wait_for = WaitFor::kRunning;  ///< --wait-for.
  /// Container waiting reasons that fail the wait at once.
  std::vector<std::string> fail_on_reasons;
  /// --ssh-config FILE: read instead of ~/.ssh/config; empty = that file.
  std::string ssh_config_file;
  /// -F FILE: read only this ssh_config ("none": none), as ssh does.
  std::string ssh_config_only;
  /// -E FILE: the log goes there (appended) instead of stderr.
  std::string log_file;

  /// --hostfile mode: print an Open MPI hostfile of the matching pods.
  bool hostfile = false;
  int slots = 0;                    ///< --slots N; 0 = not given (1 per pod).
  std::string slots_from_resource;  ///< --slots-from-resource NAME.
  bool ssh_ready = false;           ///< --ssh-ready: list only SSH-ready.
  int wait_for_count = 0;           ///< --wait-for-count N; 0 = no wait.
  /// --format, checked against the mode: kOpenMpi or kHorovod with
  /// --hostfile, kText or kJson with --report (each mode's default when
  /// not given); kOpenMpi otherwise.
  OutputFormat format = OutputFormat::kOpenMpi;

  /// --wait-only mode: wait until every HOST is ready, run nothing.
  bool wait_only = false;

  /// --report mode: `hosts` are trace files; print the launch report.
  bool report = false;
  std::string chrome_file;  ///< --chrome FILE: Chrome trace-event JSON.
  std::string svg_file;     ///< --svg FILE: Gantt chart.

  /// The config file that was read, or empty if none was.
  std::string config_file;
  /// Things worth a debug line (ignored flags, unknown -o keys, unknown
  /// K8S_AGENT_* variables). The caller logs them at -vv (debug).
  std::vector<std::string> notes;
};

/// Parses argv[1..] (`args`), the environment (`env`) and the config file
/// (read through `read_file`, which returns kNotFound for a missing file).
/// Pure: no I/O except through `read_file`. Errors are kInvalidArgument
/// (or the file's read error) with a message of the form
/// `<what>: <why> (<what to do>)`.
StatusOr<Options> ParseOptions(
    const std::vector<std::string>& args,
    const std::map<std::string, std::string>& env,
    const std::function<StatusOr<std::string>(const std::string& path)>&
        read_file);

/// The full --help text: every option, environment variable and the
/// config file format.
std::string UsageText();

/// "k8s-agent VERSION\ncommit SHA[-dirty] (COMMIT DATE)\n": the version
/// from the git tag (cmake/build_info.cmake: X.Y.Z at a tag vX.Y.Z, a
/// -dev.N+gSHORT pre-release after it), the sources' commit (-dirty:
/// tracked files differed from it) and that commit's date,
/// never the build's, so a build is reproducible. main.cc adds the
/// versions of the libraries linked in, which this target does not link.
std::string VersionText();

/// Notes on the ssh settings k8s-agent accepts without needing them,
/// merged from -o and the ssh_config files, for the debug log:
/// ConnectionAttempts (the agent retries the connection until --timeout,
/// as the pod's sshd may still be starting) and BatchMode (it never
/// prompts, so BatchMode=no acts as yes).
std::vector<std::string> SshSettingNotes(const ssh::SshOptions& merged);

/// The ssh_config files read for every host: -F's alone, else
/// --ssh-config or ~/.ssh/config, then /etc/ssh/ssh_config.
std::vector<ssh::ConfigFile> SshConfigFiles(const Options& options,
                                            const std::string& home);

/// Each host's settings, as ssh computes them for one destination: the
/// command line first, then the files (Host and Match blocks for that
/// host). Remembered per host; notes go to the debug log.
ssh::SshSettingsFor SshSettingsFromOptions(
    const Options& options, ssh::ConfigEnv env,
    ssh::UserLookup lookup = &ssh::PasswdUserName);

}  // namespace k8s_agent

#endif  // K8S_AGENT_LAUNCHER_OPTIONS_H_
