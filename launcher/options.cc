// SPDX-License-Identifier: Apache-2.0
// Parses k8s-agent's ssh-compatible argv and merges K8S_AGENT_* env and file.
//
// Why three sources. Open MPI splits its agent string ("k8s-agent --foo")
// on ':' into alternatives and then on single spaces, with no quoting, so a
// value holding ':' (a URL) or a space can never be passed as a flag there:
// "--server=https://k:6443" arrives as "--server=https". Such settings go
// in K8S_AGENT_* variables or the config file. And under tree spawn an
// orted on a worker pod runs k8s-agent itself; that orted was started by
// sshd, which does not pass on the pod's container environment, so the
// agent there only has the config file (and the in-cluster defaults).
// Precedence: flags, then env, then the file.

#include "launcher/options.h"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <utility>

#include "plugin/agent/fatal_reasons.h"
#include "plugin/base/strings.h"

#ifndef K8S_AGENT_VERSION
#define K8S_AGENT_VERSION "unknown"
#endif

namespace k8s_agent {
namespace {

constexpr char kEnvPrefix[] = "K8S_AGENT_";
constexpr char kConfigEnv[] = "K8S_AGENT_CONFIG";
constexpr char kSeeHelp[] = "see k8s-agent --help";
constexpr char kShortFlagsWithValue[] = "plio";
constexpr char kShortFlagsWithoutValue[] = "qvnxXTt46aAkC";

/// One long option. `settable` ones are also read from K8S_AGENT_<NAME>
/// and the config file. Mode options (--hostfile, --wait-only...) are
/// command-line only: every agent mpirun starts inherits the environment,
/// so a mode set there would silently change what all of them do.
struct LongOption {
  const char* name;
  const char* arg;  ///< Placeholder for the value; nullptr = no value.
  bool settable;
  const char* help;
};

constexpr LongOption kLongOptions[] = {
    {"namespace", "NS", true,
     "namespace of the pods (default: the kubeconfig context's, else the "
     "service account's)"},
    {"kubeconfig", "FILE", true,
     "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else "
     "in-cluster)"},
    {"server", "URL", true,
     "API server URL, e.g. https://10.96.0.1:443 (holds ':': under Open MPI "
     "set it through K8S_AGENT_SERVER or the config file)"},
    {"token-file", "FILE", true,
     "bearer token file, re-read when it changes (default in a pod: the "
     "service account token)"},
    {"certificate-authority", "FILE", true,
     "CA bundle that signed the API server's certificate"},
    {"selector", "LABELS", true,
     "label selector the pods must match, e.g. role=worker"},
    {"timeout", "DURATION", true,
     "how long to wait for each host's pod to be Running and answer SSH "
     "(default 10m; e.g. 30s, 10m, 1h30m)"},
    {"wait-for", "STATE", true,
     "running: phase Running with a pod IP (default); ready: also the Ready "
     "condition"},
    {"fail-on-reasons", "LIST", true,
     "comma-separated container waiting reasons that fail the wait at once, "
     "or none (default: @DEFAULT_REASONS@)"},
    {"trace", "FILE", true,
     "append one JSON line per phase per host (begin, resolved, pod_status, "
     "pod_running, ssh_ready, started, exited, failed); many agents may "
     "share the file; read it with --report"},
    {"ssh-config", "FILE", true,
     "ssh client settings to read instead of ~/.ssh/config (then "
     "/etc/ssh/ssh_config), e.g. where HOME is read-only"},
    {"verbose", nullptr, true,
     "same as -v (K8S_AGENT_VERBOSE=N sets the level: 1 or 2)"},
    {"quiet", nullptr, true, "same as -q"},
    {"wait-only", nullptr, false,
     "wait until every HOST is Running and answers SSH, run nothing; all "
     "words after the options are HOSTs"},
    {"hostfile", nullptr, false,
     "print an Open MPI hostfile (\"NAME slots=N\" lines; stdout holds "
     "nothing else) of the pods matching --selector that are Running with "
     "an IP and not terminating, in stable order (by ordinal: w-2 before "
     "w-10); with --format horovod it serves as a Horovod "
     "--host-discovery-script"},
    {"slots", "N", true,
     "--hostfile: slots=N on every line (default: no slots field, so Open "
     "MPI counts cores and horovodrun uses its --slots-per-host)"},
    {"slots-from-resource", "NAME", true,
     "--hostfile: slots from the sum of the pod's containers' "
     "resources.limits NAME (else requests), e.g. nvidia.com/gpu; pods "
     "without it are skipped, with a note on stderr"},
    {"format", "FORMAT", true,
     "--hostfile: openmpi (\"NAME slots=N\", default) or horovod "
     "(\"NAME:N\", the --host-discovery-script format)"},
    {"ssh-ready", nullptr, true,
     "--hostfile: list only pods whose sshd completes a handshake"},
    {"wait-for-count", "N", true,
     "--hostfile: first wait (watching, up to --timeout; on expiry exit 255 "
     "naming the pods not ready and why) until N pods qualify"},
    {"report", nullptr, false,
     "print where each host's start-up time went, from --trace files (all "
     "words after the options are trace files, e.g. the launcher's and the "
     "workers' under tree spawn); --format json for tools; exit 255 if a "
     "file is unreadable or holds no trace record"},
    {"chrome", "FILE", false,
     "--report: also write Chrome trace-event JSON (ui.perfetto.dev, "
     "chrome://tracing): a track per host, a span per phase"},
    {"svg", "FILE", false,
     "--report: also write a Gantt chart (SVG, a row per host)"},
    {"config", "FILE", false,
     "config file (default: $K8S_AGENT_CONFIG, else /etc/k8s-agent.conf)"},
    {"help", nullptr, false, "print this help and exit"},
    {"version", nullptr, false, "print the version and exit"},
};

const LongOption* FindLongOption(const std::string& name) {
  for (const LongOption& opt : kLongOptions) {
    if (name == opt.name) return &opt;
  }
  return nullptr;
}

std::string EnvName(const std::string& long_name) {
  std::string out = kEnvPrefix;
  for (char c : long_name) {
    out +=
        c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<int>(c)));
  }
  return out;
}

/// "KEY_NAME" -> "key-name".
std::string LongNameFromEnvSuffix(const std::string& suffix) {
  std::string out;
  for (char c : suffix) {
    out +=
        c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<int>(c)));
  }
  return out;
}

Status UsageError(const std::string& what, const std::string& why,
                  const std::string& todo) {
  return InvalidArgumentError(what + ": " + why + " (" + todo + ")");
}

/// `what "value"`, the head of most error messages.
std::string Quoted(const std::string& what, const std::string& value) {
  return what + " \"" + Printable(value) + "\"";
}

/// One value for a long option, and where it came from (for errors):
/// "--timeout", "K8S_AGENT_TIMEOUT" or "/etc/k8s-agent.conf:3: timeout".
struct Setting {
  const LongOption* opt;
  std::string value;
  std::string origin;
};

/// What the argv walk found; merged with env and file afterwards.
struct ArgvScan {
  bool help = false;
  bool version = false;
  bool wait_only = false;
  bool hostfile = false;
  bool report = false;
  bool quiet = false;
  int verbose_count = 0;
  std::string config_path;
  std::vector<Setting> settings;  ///< Long options, in argv order.
  ssh::SshOptions ssh;
  std::vector<std::string> hosts;  ///< user@ already stripped.
  std::vector<std::string> command_words;
  std::vector<std::string> notes;
};

void AddNote(std::vector<std::string>* notes, const std::string& note) {
  if (std::find(notes->begin(), notes->end(), note) == notes->end()) {
    notes->push_back(note);
  }
}

StatusOr<bool> ParseBool(const std::string& text) {
  std::string v = ToLower(Trim(text));
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  return InvalidArgumentError("not a boolean");
}

bool IsNamespaceName(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-')) {
      return false;
    }
  }
  return s.front() != '-' && s.back() != '-';
}

bool IsReasonName(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// ssh-style short options.

/// Maps ssh's LogLevel (validated by ApplySshOption) onto -q / -v, so
/// "-o LogLevel=ERROR", common in plm_rsh_args, quiets k8s-agent as it
/// quiets ssh.
void ApplyLogLevel(const std::string& level, ArgvScan* scan) {
  if (level == "quiet" || level == "fatal" || level == "error") {
    scan->quiet = true;
  } else if (level == "verbose" || level == "debug" || level == "debug1") {
    scan->verbose_count = std::max(scan->verbose_count, 1);
  } else if (level == "debug2" || level == "debug3") {
    scan->verbose_count = std::max(scan->verbose_count, 2);
  }
}

/// -o "Key=Value", "Key Value" or "Key = Value", as ssh_config lines.
Status ApplyDashO(const std::string& arg, ArgvScan* scan) {
  const std::string what = Quoted("-o", arg);
  std::string_view s = Trim(arg);
  size_t key_end = s.find_first_of(" \t=");
  std::string key(s.substr(0, key_end));
  std::string_view rest =
      key_end == std::string_view::npos ? "" : s.substr(key_end);
  rest = Trim(rest);
  if (!rest.empty() && rest.front() == '=') rest = Trim(rest.substr(1));
  if (rest.size() >= 2 && rest.front() == '"' && rest.back() == '"') {
    rest = rest.substr(1, rest.size() - 2);
  }
  std::string value(rest);
  if (key.empty() || value.empty()) {
    return UsageError(what, "expected Key=Value", "e.g. -o ConnectTimeout=5");
  }
  // ApplySshOption keeps the first value of each key, as ssh does.
  bool known = true;
  Status status = ssh::ApplySshOption(key, value, &scan->ssh, &known);
  if (!status.ok()) {
    return UsageError(what, status.message(), "fix the value or drop the -o");
  }
  if (!known) {
    AddNote(&scan->notes,
            "ignoring ssh option " + key + " (not used by k8s-agent)");
  }
  return OkStatus();
}

Status ApplyShortWithValue(char flag, const std::string& value,
                           ArgvScan* scan) {
  const std::string what = Quoted(std::string("-") + flag, value);
  switch (flag) {
    case 'p': {
      StatusOr<int> port = ParseInt(value);
      if (!port.ok() || *port < 1 || *port > 65535) {
        return UsageError(what, "invalid port", "use a number from 1 to 65535");
      }
      if (!scan->ssh.port) scan->ssh.port = *port;
      return OkStatus();
    }
    case 'l':
      if (value.empty()) {
        return UsageError(what, "empty user name", "use -l USER");
      }
      if (!scan->ssh.user) scan->ssh.user = value;
      return OkStatus();
    case 'i':
      if (value.empty()) {
        return UsageError(what, "empty file name", "use -i IDENTITY_FILE");
      }
      scan->ssh.identity_files.push_back(value);
      return OkStatus();
    case 'o':
      return ApplyDashO(value, scan);
    default:
      return InternalError("unhandled ssh flag");
  }
}

void ApplyShortWithoutValue(char flag, ArgvScan* scan) {
  switch (flag) {
    case 'q':
      scan->quiet = true;
      return;
    case 'v':
      ++scan->verbose_count;
      return;
    case 'n':
      scan->ssh.no_stdin = true;
      return;
    case 't':
      AddNote(&scan->notes,
              "ignoring -t: k8s-agent never requests a pty (Open MPI needs "
              "none)");
      return;
    case 'x':
    case 'X':
      AddNote(&scan->notes, std::string("ignoring -") + flag +
                                ": k8s-agent never forwards X11");
      return;
    case 'a':
    case 'A':
      AddNote(&scan->notes, std::string("ignoring -") + flag +
                                ": k8s-agent never forwards the ssh agent");
      return;
    default:  // T 4 6 k C
      AddNote(&scan->notes, std::string("ignoring ssh flag -") + flag);
      return;
  }
}

/// Handles one word starting with '-' (not "--..."): a group of flags such
/// as "-qx", "-p2222", "-vvp" "2222". Advances *i past what it used.
Status ScanShortOptions(const std::vector<std::string>& args, size_t* i,
                        ArgvScan* scan) {
  const std::string& word = args[*i];
  ++*i;
  for (size_t j = 1; j < word.size(); ++j) {
    char flag = word[j];
    std::string name = std::string("-") + flag;
    if (std::string_view(kShortFlagsWithValue).find(flag) !=
        std::string_view::npos) {
      std::string value;
      if (j + 1 < word.size()) {
        value = word.substr(j + 1);
      } else if (*i < args.size()) {
        value = args[(*i)++];
      } else {
        return UsageError(name, "missing value",
                          std::string("use ") + name + " VALUE; " + kSeeHelp);
      }
      return ApplyShortWithValue(flag, value, scan);
    }
    if (std::string_view(kShortFlagsWithoutValue).find(flag) ==
        std::string_view::npos) {
      std::string what =
          word.size() > 2 ? name + " (in \"" + Printable(word) + "\")" : name;
      return UsageError(
          what, "unknown option",
          "k8s-agent takes the ssh options -p -l -i -o -n -q -v -t -x -X -T "
          "-4 -6 -a -A -k -C and long options; see k8s-agent --help");
    }
    ApplyShortWithoutValue(flag, scan);
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------
// Long options.

Status ScanLongOption(const std::vector<std::string>& args, size_t* i,
                      ArgvScan* scan) {
  const std::string& word = args[*i];
  ++*i;
  size_t eq = word.find('=');
  std::string name = word.substr(2, eq == std::string::npos ? eq : eq - 2);
  const LongOption* opt = FindLongOption(name);
  std::string flag = "--" + name;
  if (opt == nullptr) {
    return UsageError(Printable(flag), "unknown option", kSeeHelp);
  }
  std::string value;
  if (opt->arg == nullptr) {
    if (eq != std::string::npos) {
      return UsageError(flag, "takes no value",
                        "write " + flag + " alone; " + kSeeHelp);
    }
  } else if (eq != std::string::npos) {
    value = word.substr(eq + 1);
  } else if (*i < args.size()) {
    value = args[(*i)++];
  } else {
    return UsageError(
        flag, "missing value",
        "use " + flag + " " + opt->arg + " or " + flag + "=" + opt->arg);
  }

  if (name == "help") {
    scan->help = true;
  } else if (name == "version") {
    scan->version = true;
  } else if (name == "wait-only") {
    scan->wait_only = true;
  } else if (name == "hostfile") {
    scan->hostfile = true;
  } else if (name == "report") {
    scan->report = true;
  } else if (name == "verbose") {
    ++scan->verbose_count;
  } else if (name == "quiet") {
    scan->quiet = true;
  } else if (name == "config") {
    if (value.empty()) {
      return UsageError(Quoted(flag, value), "empty file name",
                        "use --config FILE");
    }
    scan->config_path = value;
  } else {
    scan->settings.push_back(
        Setting{opt, opt->arg == nullptr ? "true" : value, flag});
  }
  return OkStatus();
}

/// Takes one HOST word: strips "user@" (at the last '@', as ssh does) and
/// keeps the user unless -l or -o User came first.
Status ScanHostWord(const std::string& word, ArgvScan* scan) {
  size_t at = word.rfind('@');
  std::string host = at == std::string::npos ? word : word.substr(at + 1);
  if (at != std::string::npos) {
    if (at == 0) {
      return UsageError(Quoted("HOST", word), "empty user name before '@'",
                        "write USER@HOST or HOST");
    }
    if (!scan->ssh.user) scan->ssh.user = word.substr(0, at);
  }
  if (host.empty()) {
    return UsageError(Quoted("HOST", word), "empty host name",
                      "name a pod, e.g. k8s-agent w-0 hostname");
  }
  scan->hosts.push_back(host);
  return OkStatus();
}

/// Walks argv as OpenSSH does: options before HOST and directly after it,
/// up to the first word that is not an option, which starts the command;
/// "--" ends the options. In --wait-only and --hostfile modes there is no
/// command: every non-option word is a HOST and options may be anywhere.
StatusOr<ArgvScan> ScanArgs(const std::vector<std::string>& args) {
  ArgvScan scan;
  bool options_ended = false;
  size_t i = 0;
  while (i < args.size()) {
    const std::string& word = args[i];
    const bool many_hosts = scan.wait_only || scan.hostfile || scan.report;
    if (!options_ended && word == "--") {
      options_ended = true;
      ++i;
      if (!many_hosts && !scan.hosts.empty()) break;  // Command follows.
      continue;
    }
    if (!options_ended && word.size() > 1 && word[0] == '-') {
      if (word[1] == '-') {
        K8S_RETURN_IF_ERROR(ScanLongOption(args, &i, &scan));
      } else {
        K8S_RETURN_IF_ERROR(ScanShortOptions(args, &i, &scan));
      }
      continue;
    }
    if (!many_hosts && !scan.hosts.empty()) break;  // The command starts.
    K8S_RETURN_IF_ERROR(ScanHostWord(word, &scan));
    ++i;
    if (!many_hosts && options_ended) break;  // "-- HOST CMD...".
  }
  if (scan.ssh.log_level) ApplyLogLevel(*scan.ssh.log_level, &scan);
  scan.command_words.assign(args.begin() + static_cast<ptrdiff_t>(i),
                            args.end());
  return scan;
}

// ---------------------------------------------------------------------------
// Environment and config file.

std::vector<Setting> SettingsFromEnv(
    const std::map<std::string, std::string>& env,
    std::vector<std::string>* notes) {
  std::vector<Setting> out;
  for (const auto& [key, value] : env) {
    if (!StartsWith(key, kEnvPrefix) || key == kConfigEnv) continue;
    const LongOption* opt = FindLongOption(
        LongNameFromEnvSuffix(key.substr(sizeof(kEnvPrefix) - 1)));
    if (opt == nullptr || !opt->settable || EnvName(opt->name) != key) {
      AddNote(notes, "ignoring unknown environment variable " + key);
      continue;
    }
    if (value.empty()) continue;  // Set but empty = not set.
    out.push_back(Setting{opt, value, key});
  }
  return out;
}

StatusOr<std::vector<Setting>> SettingsFromFile(const std::string& text,
                                                const std::string& path) {
  std::vector<Setting> out;
  std::vector<std::string> lines = Split(text, '\n');
  for (size_t n = 0; n < lines.size(); ++n) {
    std::string where = path + ":" + std::to_string(n + 1);
    std::string_view line = Trim(lines[n]);
    if (line.empty() || line.front() == '#') continue;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      return UsageError(where,
                        "expected name=value, got \"" + Printable(line) + "\"",
                        "e.g. namespace=mpi; " + std::string(kSeeHelp));
    }
    std::string key(Trim(line.substr(0, eq)));
    std::string_view value = Trim(line.substr(eq + 1));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    }
    // The env spelling is accepted too, so one file can serve as both.
    std::string name = key;
    if (StartsWith(key, kEnvPrefix)) {
      name = LongNameFromEnvSuffix(key.substr(sizeof(kEnvPrefix) - 1));
    }
    const LongOption* opt = FindLongOption(name);
    if (opt == nullptr || !opt->settable ||
        (name != key && EnvName(name) != key)) {
      std::string known;
      for (const LongOption& o : kLongOptions) {
        if (!o.settable) continue;
        if (!known.empty()) known += ", ";
        known += o.name;
      }
      return UsageError(where, "unknown setting \"" + Printable(key) + "\"",
                        "known: " + known);
    }
    if (value.empty()) continue;
    out.push_back(Setting{opt, std::string(value), where + ": " + name});
  }
  return out;
}

/// Reads the config file: --config, else $K8S_AGENT_CONFIG, else the
/// default path, which alone may be missing.
StatusOr<std::vector<Setting>> ReadConfigFile(
    const ArgvScan& scan, const std::map<std::string, std::string>& env,
    const std::function<StatusOr<std::string>(const std::string&)>& read_file,
    std::string* used_path) {
  std::string path = kDefaultConfigPath;
  std::string named_by;
  auto it = env.find(kConfigEnv);
  if (!scan.config_path.empty()) {
    path = scan.config_path;
    named_by = "--config";
  } else if (it != env.end() && !it->second.empty()) {
    path = it->second;
    named_by = kConfigEnv;
  }
  StatusOr<std::string> text = read_file(path);
  if (!text.ok()) {
    if (text.status().code() == Code::kNotFound && named_by.empty()) {
      return std::vector<Setting>{};
    }
    if (text.status().code() == Code::kNotFound) {
      return UsageError(
          Quoted(named_by, path), "config file not found",
          "create it, or point " + named_by + " at an existing file");
    }
    return Status(text.status().code(), "config file " + path + ": " +
                                            text.status().message() +
                                            " (make it readable, or set " +
                                            kConfigEnv + " to another file)");
  }
  *used_path = path;
  return SettingsFromFile(*text, path);
}

// ---------------------------------------------------------------------------
// Applying settings.

Status ApplySetting(const Setting& s, Options* o) {
  const std::string name = s.opt->name;
  const std::string& v = s.value;
  const std::string what = Quoted(s.origin, v);
  if (v.empty() && name != "fail-on-reasons") {
    return UsageError(what, "empty value",
                      "give a value, or leave the option out");
  }
  if (name == "namespace") {
    if (!IsNamespaceName(v)) {
      return UsageError(what, "not a valid namespace name",
                        "lower-case letters, digits and '-', at most 63");
    }
    o->cluster.ns = v;
  } else if (name == "kubeconfig") {
    o->cluster.kubeconfig = v;
  } else if (name == "server") {
    o->cluster.server = v;
  } else if (name == "token-file") {
    o->cluster.token_file = v;
  } else if (name == "certificate-authority") {
    o->cluster.certificate_authority = v;
  } else if (name == "selector") {
    o->selector = v;
  } else if (name == "timeout") {
    StatusOr<Duration> d = ParseDuration(v);
    if (!d.ok()) {
      return UsageError(what, "invalid duration", "use e.g. 30s, 10m");
    }
    if (*d <= Duration::zero()) {
      return UsageError(what, "must be positive", "use e.g. 30s, 10m");
    }
    o->timeout = *d;
  } else if (name == "wait-for") {
    std::string state = ToLower(v);
    if (state != "running" && state != "ready") {
      return UsageError(what, "unknown state", "use running or ready");
    }
    o->wait_for = state;
  } else if (name == "fail-on-reasons") {
    std::vector<std::string> reasons;
    if (ToLower(Trim(v)) != "none") {
      for (const std::string& part : Split(v, ',')) {
        std::string reason(Trim(part));
        if (reason.empty()) continue;
        if (!IsReasonName(reason)) {
          return UsageError(
              what, "\"" + Printable(reason) + "\" is not a reason name",
              "use e.g. ImagePullBackOff,CrashLoopBackOff, "
              "or none");
        }
        reasons.push_back(reason);
      }
    }
    o->fail_on_reasons = reasons;
  } else if (name == "trace") {
    o->trace_file = v;
  } else if (name == "ssh-config") {
    o->ssh_config_file = v;
  } else if (name == "verbose") {
    StatusOr<bool> b = ParseBool(v);
    StatusOr<int> n = ParseInt(v);
    if (n.ok()) {
      o->verbosity = std::min(*n, 2);
    } else if (b.ok()) {
      o->verbosity = *b ? 1 : 0;
    } else {
      return UsageError(what, "invalid verbosity", "use 0, 1 or 2");
    }
  } else if (name == "quiet" || name == "ssh-ready") {
    StatusOr<bool> b = ParseBool(v);
    if (!b.ok()) {
      return UsageError(what, "not a boolean", "use true or false");
    }
    (name == "quiet" ? o->quiet : o->ssh_ready) = *b;
  } else if (name == "slots" || name == "wait-for-count") {
    StatusOr<int> n = ParseInt(v);
    if (!n.ok() || *n < 1) {
      return UsageError(what, "not a whole number >= 1", "use e.g. 4");
    }
    (name == "slots" ? o->slots : o->wait_for_count) = *n;
  } else if (name == "slots-from-resource") {
    o->slots_from_resource = v;
  } else if (name == "format") {
    std::string format = ToLower(Trim(v));
    if (format != "openmpi" && format != "horovod" && format != "text" &&
        format != "json") {
      return UsageError(what, "unknown format",
                        "use openmpi or horovod (--hostfile), text or json "
                        "(--report)");
    }
    o->format = format;
  } else if (name == "chrome" || name == "svg") {
    (name == "chrome" ? o->chrome_file : o->svg_file) = v;
  } else {
    return InternalError("option --" + name + " has no handler");
  }
  return OkStatus();
}

Status ValidateReport(Options* o) {
  if (o->hostfile || o->wait_only) {
    return UsageError("--report with --hostfile or --wait-only", "both given",
                      "use one mode");
  }
  if (o->hosts.empty()) {
    return UsageError(
        "--report", "no trace file given",
        "usage: k8s-agent --report TRACE...; " + std::string(kSeeHelp));
  }
  if (o->format == "openmpi") o->format = "text";
  if (o->format != "text" && o->format != "json") {
    return UsageError("--report --format " + o->format, "not a report format",
                      "use text or json");
  }
  return OkStatus();
}

Status ValidateMode(Options* o) {
  if (o->report) return ValidateReport(o);
  if (!o->chrome_file.empty() || !o->svg_file.empty()) {
    return UsageError("--chrome / --svg", "given without --report",
                      "use k8s-agent --report TRACE... --svg FILE");
  }
  if (o->hostfile && o->wait_only) {
    return UsageError("--hostfile and --wait-only", "both given", "use one");
  }
  if (o->slots > 0 && !o->slots_from_resource.empty()) {
    return UsageError("--slots and --slots-from-resource", "both given",
                      "use one");
  }
  if (o->hostfile) {
    if (o->format == "text" || o->format == "json") {
      return UsageError("--hostfile --format " + o->format,
                        "not a hostfile format", "use openmpi or horovod");
    }
    if (!o->hosts.empty()) {
      return UsageError(Quoted("--hostfile", o->hosts.front()), "takes no HOST",
                        "--hostfile lists the pods matching --selector");
    }
    return OkStatus();
  }
  if (o->slots > 0 || !o->slots_from_resource.empty() || o->ssh_ready ||
      o->wait_for_count > 0 || o->format != "openmpi") {
    AddNote(&o->notes,
            "ignoring --slots, --slots-from-resource, --ssh-ready, "
            "--wait-for-count and --format: they apply to --hostfile only");
  }
  if (o->hosts.empty()) {
    return UsageError("no HOST given", "k8s-agent needs a pod to run on",
                      "usage: k8s-agent [options] [user@]HOST COMMAND...; " +
                          std::string(kSeeHelp));
  }
  o->host = o->hosts.front();
  if (o->wait_only) return OkStatus();
  if (Trim(o->command).empty()) {
    return UsageError(
        "no remote command",
        "k8s-agent runs commands, it has no interactive shell",
        "give the command after HOST, e.g. k8s-agent " + o->host + " hostname");
  }
  return OkStatus();
}

/// Wraps `text` at 79 columns, every line indented by `indent`.
std::string Wrap(const std::string& text, size_t indent) {
  std::string out;
  size_t column = indent;
  for (const std::string& word : Split(text, ' ')) {
    if (column > indent && column + 1 + word.size() > 79) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    } else if (column > indent) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
  }
  return out;
}

}  // namespace

StatusOr<Options> ParseOptions(
    const std::vector<std::string>& args,
    const std::map<std::string, std::string>& env,
    const std::function<StatusOr<std::string>(const std::string& path)>&
        read_file) {
  K8S_ASSIGN_OR_RETURN(ArgvScan scan, ScanArgs(args));
  Options o;
  o.fail_on_reasons = DefaultFatalReasons();
  o.notes = scan.notes;
  if (scan.help || scan.version) {
    // Answer even when the environment or the config file is broken.
    o.help = scan.help;
    o.version = scan.version;
    return o;
  }

  K8S_ASSIGN_OR_RETURN(std::vector<Setting> from_file,
                       ReadConfigFile(scan, env, read_file, &o.config_file));
  std::vector<Setting> from_env = SettingsFromEnv(env, &o.notes);
  // Lowest precedence first: later settings overwrite earlier ones.
  for (const auto* layer : {&from_file, &from_env, &scan.settings}) {
    for (const Setting& s : *layer) K8S_RETURN_IF_ERROR(ApplySetting(s, &o));
  }
  if (scan.quiet) o.quiet = true;
  if (scan.verbose_count > 0) o.verbosity = std::min(scan.verbose_count, 2);

  o.ssh = scan.ssh;
  o.wait_only = scan.wait_only;
  o.hostfile = scan.hostfile;
  o.report = scan.report;
  o.hosts = scan.hosts;
  o.command_words = scan.command_words;
  o.command = Join(o.command_words, " ");
  K8S_RETURN_IF_ERROR(ValidateMode(&o));
  return o;
}

std::string UsageText() {
  std::string reasons = Join(DefaultFatalReasons(), ", ");
  std::string out =
      "Usage: k8s-agent [options] [user@]HOST [options] COMMAND-WORD...\n"
      "       k8s-agent [options] --wait-only HOST...\n"
      "       k8s-agent [options] --hostfile [--selector LABELS]\n"
      "       k8s-agent --report [--format json] [--svg F] [--chrome F] "
      "TRACE...\n"
      "       k8s-agent --help | --version\n"
      "\n"
      "Runs a command on the Kubernetes pod named HOST over SSH, as ssh "
      "would,\n"
      "but first waits (watching the pods API) until the pod is Running with "
      "an IP\n"
      "and its sshd completes a handshake. Made to be Open MPI's "
      "plm_rsh_agent and\n"
      "MPICH hydra's launcher. The command words are joined with single "
      "spaces and\n"
      "run by the remote login shell, as ssh does. stdout carries only the "
      "remote\n"
      "command's output; k8s-agent's own messages go to stderr.\n"
      "\n"
      "HOST is a pod name; a DNS name such as w-0.svc.ns.svc.cluster.local "
      "(first\n"
      "label = pod, third = namespace unless --namespace is given); a pod's\n"
      "spec.hostname; or a pod IP. Options may come before HOST and right "
      "after\n"
      "it; the first word after HOST that is not an option starts the "
      "command.\n"
      "\"--\" ends the options.\n"
      "\n"
      "Exit status: the remote command's; 128+N when it died of signal N\n"
      "(ssh gives 255 there); 255 when k8s-agent itself fails (pod failed "
      "or\n"
      "never ready before --timeout, SSH refused, bad usage).\n"
      "\n"
      "ssh options (as ssh takes them; the first value given wins):\n"
      "  -p PORT                      sshd port on the pod (default 22)\n"
      "  -l USER                      remote user (or USER@HOST; default: "
      "the\n"
      "                               passwd name of the local uid, as in "
      "ssh)\n"
      "  -i FILE                      private key file; repeatable (default:\n"
      "                               ~/.ssh/id_ed25519, id_ecdsa, id_rsa)\n"
      "  -o KEY=VALUE, -o 'KEY VALUE' ssh_config setting: Port, User, "
      "IdentityFile,\n"
      "                               StrictHostKeyChecking, "
      "UserKnownHostsFile,\n"
      "                               ConnectTimeout, ServerAliveInterval,\n"
      "                               ServerAliveCountMax, "
      "ConnectionAttempts,\n"
      "                               BatchMode, LogLevel, Ciphers, "
      "KexAlgorithms,\n"
      "                               MACs, HostKeyAlgorithms (default: "
      "OpenSSH 9's;\n"
      "                               +x appends, -x removes, ^x puts "
      "first); other\n"
      "                               keys are ignored\n"
      "                               (shown with -v)\n"
      "  -n                           read no stdin\n"
      "  -q                           quiet: errors only, no progress lines\n"
      "  -v                           verbose: each phase with timings; -vv: "
      "debug\n"
      "  -t, -tt                      ignored: k8s-agent never requests a "
      "pty\n"
      "  -x -X -T -4 -6 -a -A -k -C   accepted and ignored\n"
      "Flags combine (-qx) and values may be attached (-p2222, "
      "-oBatchMode=yes).\n"
      "\n"
      "k8s-agent options (--name VALUE or --name=VALUE; the last one given "
      "wins):\n";
  for (const LongOption& opt : kLongOptions) {
    std::string head = std::string("  --") + opt.name;
    if (opt.arg != nullptr) head += std::string(" ") + opt.arg;
    if (head.size() < 31) {
      head.resize(31, ' ');
    } else {
      head += "\n" + std::string(31, ' ');
    }
    std::string help = opt.help;
    size_t pos = help.find("@DEFAULT_REASONS@");
    if (pos != std::string::npos) help.replace(pos, 17, reasons);
    out += head + Wrap(help, 31) + "\n";
  }
  out +=
      "\n"
      "Environment (used when the option is not on the command line; empty = "
      "unset):\n";
  for (const LongOption& opt : kLongOptions) {
    if (!opt.settable) continue;
    std::string line = "  " + EnvName(opt.name);
    line.resize(std::max<size_t>(line.size() + 1, 38), ' ');
    out += line + "--" + opt.name + "\n";
  }
  out +=
      "  K8S_AGENT_CONFIG                    the config file (see below)\n"
      "  KUBECONFIG                          kubeconfig when --kubeconfig is "
      "unset\n"
      "  KUBERNETES_SERVICE_HOST, _PORT      in-cluster API server address\n"
      "Booleans take 1/0, true/false, yes/no, on/off; K8S_AGENT_VERBOSE takes "
      "0, 1\n"
      "or 2.\n"
      "\n"
      "Config file (--config, else $K8S_AGENT_CONFIG, else "
      "/etc/k8s-agent.conf; the\n"
      "default file may be absent, a named one must exist): one name=value per "
      "line,\n"
      "with the long option's name (token-file=/var/run/token) or its "
      "variable's\n"
      "(K8S_AGENT_TOKEN_FILE=/var/run/token); optional quotes around the "
      "value;\n"
      "whole-line # comments and blank lines are skipped; an unknown name is "
      "an\n"
      "error. Modes (--wait-only, --hostfile, --report, --help, --version), "
      "--chrome,\n"
      "--svg and --config are command-line only. Precedence: command line, "
      "then\n"
      "environment, then file.\n"
      "\n"
      "Under Open MPI: the agent string (plm_rsh_agent) is split on ':' and "
      "on\n"
      "spaces with no quoting, so option values there must hold neither: "
      "\"k8s-agent\n"
      "--server=https://k:6443\" arrives as \"--server=https\". Put such "
      "values in\n"
      "K8S_AGENT_* variables or the config file. Under tree spawn (more than "
      "64\n"
      "hosts) orted runs k8s-agent on worker pods, under sshd, without the "
      "pod's\n"
      "environment: give those pods the config file (or rely on the "
      "in-cluster\n"
      "service account).\n"
      "\n"
      "Launch report (--report): trace times are the agent's clock; "
      "pod_status lines\n"
      "carry the pod's creationTimestamp, condition lastTransitionTimes and "
      "container\n"
      "startedAt as the API server, scheduler and kubelet wrote them: their "
      "clocks,\n"
      "whole seconds. A pod time is placed no later than the agent first saw "
      "it; a\n"
      "later one means that clock is ahead of the agent's and is reported as "
      "clock\n"
      "skew. A clock that is behind only makes a phase look longer. Exit 0 "
      "even when\n"
      "hosts failed (the report names them); 255 for unreadable or empty "
      "traces.\n"
      "\n"
      "Examples:\n"
      "  mpirun --mca plm_rsh_agent \"k8s-agent --timeout=5m\" -H w-0,w-1 "
      "./app\n"
      "  OMPI_MCA_plm_rsh_agent=k8s-agent PRTE_MCA_plm_ssh_agent=k8s-agent "
      "mpirun ...\n"
      "  k8s-agent --wait-only --timeout 5m w-0 w-1 w-2\n"
      "  k8s-agent --hostfile --selector role=worker --slots 4 > hostfile\n"
      "  k8s-agent --hostfile --selector role=worker --wait-for-count 8 "
      "--ssh-ready \\\n"
      "      --slots-from-resource nvidia.com/gpu --timeout 5m > hostfile\n"
      "  horovodrun --host-discovery-script ./discover.sh ...  (discover.sh: "
      "exec\n"
      "      k8s-agent --hostfile --format horovod --selector role=worker "
      "--slots 4)\n"
      "  k8s-agent --report --svg launch.svg --chrome launch.json "
      "trace.jsonl w-*.jsonl\n";
  return out;
}

std::string VersionText() {
  return std::string("k8s-agent ") + K8S_AGENT_VERSION + "\n";
}

}  // namespace k8s_agent
