// SPDX-License-Identifier: Apache-2.0
// Every option k8s-agent takes, each in one table entry with its setter:
// the argv scanner and the env and config-file loaders (options.cc) and
// --help (usage.cc) all read these tables, so an option is added in one
// place. Internal to the launcher.

#ifndef K8S_AGENT_LAUNCHER_OPTION_TABLE_H_
#define K8S_AGENT_LAUNCHER_OPTION_TABLE_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/options.h"
#include "plugin/base/status.h"
#include "plugin/base/usage_text.h"

namespace k8s_agent {

inline constexpr char kEnvPrefix[] = "K8S_AGENT_";
inline constexpr char kSeeHelp[] = "see k8s-agent --help";

/// Where a value came from. Later layers win: file, then env, then flags.
enum class Layer { kFile, kEnv, kCommandLine };

/// The parse in progress: the Options being filled, and what is only
/// settled once every layer is in.
struct ParseState {
  Options options;
  /// -v/--verbose and -q/--quiet on the command line (or ssh's LogLevel
  /// there), applied over K8S_AGENT_VERBOSE / _QUIET and the file.
  int verbose_count = 0;
  bool quiet = false;
  std::string config_path;  ///< --config.
  /// --format as given: checked against the mode once the mode is known.
  bool format_given = false;
  OutputFormat format = OutputFormat::kOpenMpi;
  Layer format_layer = Layer::kFile;
  std::string format_origin;  ///< "--format", "K8S_AGENT_FORMAT", ...
};

struct LongOption;

/// One value for a long option, and where it came from (for errors):
/// "--timeout", "K8S_AGENT_TIMEOUT" or "/etc/k8s-agent.conf:3: timeout".
struct Setting {
  const LongOption* opt;
  std::string value;  ///< "true" for a flag (an option without a value).
  std::string origin;
  Layer layer;
};

/// Who may set a long option, and when the setter runs.
enum class OptionSource {
  /// The command line, K8S_AGENT_<NAME> or the config file; applied once
  /// every layer is read, lowest precedence first.
  kAnywhere,
  /// The command line only; applied with the kAnywhere ones. Every agent
  /// mpirun starts inherits the environment, so a mode or an output set
  /// there would silently change what all of them do.
  kCommandLine,
  /// The command line only, applied as the scan meets it: a mode changes
  /// how the words after it are read, --config names the file read next.
  kScan,
};

/// One long option: --NAME [ARG].
struct LongOption {
  const char* name;
  const char* arg;  ///< Value placeholder for --help; nullptr = a flag.
  OptionSource source;
  const char* help;  ///< "@DEFAULT_REASONS@" is replaced in --help.
  /// Checks `setting.value` and stores it in `state`.
  Status (*set)(const Setting& setting, ParseState* state);

  bool settable() const { return source == OptionSource::kAnywhere; }
};

/// One ssh-style short flag: -P [VALUE].
struct ShortFlag {
  char flag;
  const char* arg;  ///< Value placeholder; nullptr = takes no value.
  /// The --help line's head ("-t, -tt") and text; a null `help` lists the
  /// flag among those "accepted and ignored".
  const char* head;
  const char* help;
  /// Applies the flag (`value` is empty for one without a value).
  Status (*set)(char flag, const std::string& value, ParseState* state);
  /// An ssh flag k8s-agent refuses: --help lists it among those.
  bool refused = false;
};

/// A constant table, iterable.
template <typename T>
struct TableView {
  const T* first;
  size_t size;
  const T* begin() const { return first; }
  const T* end() const { return first + size; }
};

/// Every long option, in --help order (long_options.cc).
TableView<LongOption> LongOptions();
const LongOption* FindLongOption(std::string_view name);
/// The long option a misspelt `name` most likely meant, for "did you
/// mean" (ClosestName's rule, plugin/base/usage_text.h); nullptr if none
/// is. `settable_only`: only options the environment and the file may set.
const LongOption* ClosestLongOption(std::string_view name, bool settable_only);
/// "token-file" -> "K8S_AGENT_TOKEN_FILE".
std::string EnvName(const LongOption& opt);

/// Every short flag, in --help order (ssh_flags.cc).
TableView<ShortFlag> ShortFlags();
const ShortFlag* FindShortFlag(char flag);
/// Maps ssh's LogLevel (validated by -o) onto the -q / -v counts.
void ApplyLogLevel(const std::string& level, ParseState* state);

/// `what "value"`, the head of most error messages.
std::string Quoted(const std::string& what, const std::string& value);
/// Adds `note` unless it is there already.
void AddNote(std::vector<std::string>* notes, const std::string& note);

}  // namespace k8s_agent

#endif  // K8S_AGENT_LAUNCHER_OPTION_TABLE_H_
