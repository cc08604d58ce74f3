// SPDX-License-Identifier: Apache-2.0
// k8s-agent-sshd's command line: every option one entry of a table (in
// sshd_options.cc) with its setter and its --help line, as k8s-agent's
// are in option_table.h, so the parser and --help cannot disagree. The
// worker's program links this and the sshd layer, not k8s-agent's
// options.

#ifndef K8S_AGENT_LAUNCHER_SSHD_OPTIONS_H_
#define K8S_AGENT_LAUNCHER_SSHD_OPTIONS_H_

#include <string>
#include <vector>

#include "plugin/base/status.h"

namespace k8s_agent::sshd {

struct SshdOptions {
  int port = 2222;                       ///< --port.
  std::string keys = "/etc/ssh-secret";  ///< --keys: the mounted Secret.
  std::string user;                      ///< --user; empty: the default.
  std::string sshd;                      ///< --sshd; empty: searched for.
  std::string run_dir;                   ///< --run-dir; empty: a new one.
  std::string log_level = "INFO";        ///< --log-level: sshd's LogLevel.
  std::vector<std::string> session_env;  ///< --session-env, all of them.
  std::vector<std::string> sshd_args;    ///< After "--" or the options.
  bool help = false;                     ///< -h, --help.
  bool version = false;                  ///< -V, --version.
};

/// One option: --NAME [ARG], and -SHORT for the flags that have one.
struct SshdOption {
  const char* name;
  char short_name;  ///< '\0' when there is none; only flags have one.
  const char* arg;  ///< Value placeholder for --help; nullptr = a flag.
  const char* help;
  /// Checks `value` ("" for a flag) and stores it.
  Status (*set)(const std::string& value, SshdOptions* options);
};

/// Every option, in --help order.
const std::vector<SshdOption>& SshdOptionTable();

/// Parses argv[1..] (`args`). Options come first, up to "--" or the
/// first word that is not one (a lone "-" is not); the rest goes to sshd
/// as it is. "--name VALUE" or "--name=VALUE", whole names only; the last
/// value wins, but --session-env adds to the list. Flags group ("-hV").
/// Errors are kInvalidArgument, `<what>: <why> (<what to do>)`, with "did
/// you mean" for a misspelt long option.
StatusOr<SshdOptions> ParseSshdOptions(const std::vector<std::string>& args);

/// The --help text, every option's line from the table.
std::string SshdUsageText();

}  // namespace k8s_agent::sshd

#endif  // K8S_AGENT_LAUNCHER_SSHD_OPTIONS_H_
