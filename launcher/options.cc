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

#include "launcher/option_table.h"
#include "plugin/agent/fatal_reasons.h"
#include "plugin/base/strings.h"

namespace k8s_agent {
namespace {

constexpr char kConfigEnv[] = "K8S_AGENT_CONFIG";

/// "KEY_NAME" -> "key-name".
std::string LongNameFromEnvSuffix(const std::string& suffix) {
  std::string out;
  for (char c : suffix) {
    out +=
        c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<int>(c)));
  }
  return out;
}

// ---------------------------------------------------------------------------
// The command line.

/// Handles one word starting with '-' (not "--..."): a group of flags such
/// as "-qx", "-p2222", "-vvp" "2222". Advances *i past what it used.
Status ScanShortOptions(const std::vector<std::string>& args, size_t* i,
                        ParseState* p) {
  const std::string& word = args[*i];
  ++*i;
  for (size_t j = 1; j < word.size(); ++j) {
    const char c = word[j];
    const std::string name = std::string("-") + c;
    const ShortFlag* flag = FindShortFlag(c);
    if (flag == nullptr) {
      std::string known;
      for (const ShortFlag& f : ShortFlags())
        known += std::string(" -") + f.flag;
      std::string what =
          word.size() > 2 ? name + " (in \"" + Printable(word) + "\")" : name;
      return UsageError(what, "unknown option",
                        "k8s-agent takes the ssh options" + known +
                            " and long options; " + kSeeHelp);
    }
    if (flag->arg == nullptr) {
      K8S_RETURN_IF_ERROR(flag->set(c, "", p));
      continue;
    }
    // A flag with a value ends the group: the rest of the word is it.
    std::string value;
    if (j + 1 < word.size()) {
      value = word.substr(j + 1);
    } else if (*i < args.size()) {
      value = args[(*i)++];
    } else {
      return UsageError(name, "missing value",
                        "use " + name + " " + flag->arg + "; " + kSeeHelp);
    }
    return flag->set(c, value, p);
  }
  return OkStatus();
}

/// Handles one "--name", "--name=value" or "--name value". Options the
/// scan needs (modes, --config) are applied now; the others are appended
/// to `later`, to be applied over env and file.
Status ScanLongOption(const std::vector<std::string>& args, size_t* i,
                      ParseState* p, std::vector<Setting>* later) {
  const std::string& word = args[*i];
  ++*i;
  size_t eq = word.find('=');
  std::string name = word.substr(2, eq == std::string::npos ? eq : eq - 2);
  const LongOption* opt = FindLongOption(name);
  std::string flag = "--" + name;
  if (opt == nullptr) {
    const LongOption* meant = ClosestLongOption(name, false);
    return UsageError(Printable(flag), "unknown option",
                      meant == nullptr ? std::string(kSeeHelp)
                                       : std::string("did you mean --") +
                                             meant->name + "? " + kSeeHelp);
  }
  K8S_ASSIGN_OR_RETURN(
      std::string value,
      LongOptionValue(args, i, word, eq, flag, opt->arg, "true", kSeeHelp));
  Setting setting{opt, value, flag, Layer::kCommandLine};
  if (opt->source == OptionSource::kScan) return opt->set(setting, p);
  later->push_back(std::move(setting));
  return OkStatus();
}

/// Takes one HOST word: strips "user@" (at the last '@', as ssh does) and
/// keeps the user unless -l or -o User came first.
Status ScanHostWord(const std::string& word, ParseState* p) {
  size_t at = word.rfind('@');
  std::string host = at == std::string::npos ? word : word.substr(at + 1);
  if (at != std::string::npos) {
    if (at == 0) {
      return UsageError(Quoted("HOST", word), "empty user name before '@'",
                        "write USER@HOST or HOST");
    }
    if (!p->options.ssh.user) p->options.ssh.user = word.substr(0, at);
  }
  if (host.empty()) {
    return UsageError(Quoted("HOST", word), "empty host name",
                      "name a pod, e.g. k8s-agent w-0 hostname");
  }
  p->options.hosts.push_back(host);
  return OkStatus();
}

/// Walks argv as OpenSSH does: options before HOST and directly after it,
/// up to the first word that is not an option, which starts the command;
/// "--" ends the options. In --wait-only, --hostfile and --report modes
/// there is no command: every non-option word is a HOST (or trace file)
/// and options may be anywhere.
Status ScanArgs(const std::vector<std::string>& args, ParseState* p,
                std::vector<Setting>* later) {
  const Options& o = p->options;
  bool options_ended = false;
  size_t i = 0;
  while (i < args.size()) {
    const std::string& word = args[i];
    const bool many_hosts = o.wait_only || o.hostfile || o.report;
    if (!options_ended && word == "--") {
      options_ended = true;
      ++i;
      if (!many_hosts && !o.hosts.empty()) break;  // Command follows.
      continue;
    }
    if (!options_ended && word.size() > 1 && word[0] == '-') {
      const size_t start = i;
      if (word[1] == '-') {
        K8S_RETURN_IF_ERROR(ScanLongOption(args, &i, p, later));
      } else {
        K8S_RETURN_IF_ERROR(ScanShortOptions(args, &i, p));
      }
      p->options.option_words.insert(
          p->options.option_words.end(),
          args.begin() + static_cast<ptrdiff_t>(start),
          args.begin() + static_cast<ptrdiff_t>(i));
      continue;
    }
    if (!many_hosts && !o.hosts.empty()) break;  // The command starts.
    K8S_RETURN_IF_ERROR(ScanHostWord(word, p));
    ++i;
    if (!many_hosts && options_ended) break;  // "-- HOST CMD...".
  }
  p->options.command_words.assign(args.begin() + static_cast<ptrdiff_t>(i),
                                  args.end());
  return OkStatus();
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
    if (opt == nullptr || !opt->settable() || EnvName(*opt) != key) {
      const LongOption* meant = ClosestLongOption(
          LongNameFromEnvSuffix(key.substr(sizeof(kEnvPrefix) - 1)), true);
      AddNote(notes, "ignoring unknown environment variable " + key +
                         (meant == nullptr
                              ? ""
                              : " (did you mean " + EnvName(*meant) + "?)"));
      continue;
    }
    if (value.empty()) continue;  // Set but empty = not set.
    out.push_back(Setting{opt, value, key, Layer::kEnv});
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
    if (opt == nullptr || !opt->settable() ||
        (name != key && EnvName(*opt) != key)) {
      std::string known;
      for (const LongOption& o : LongOptions()) {
        if (!o.settable()) continue;
        if (!known.empty()) known += ", ";
        known += o.name;
      }
      // The suggestion keeps the spelling used: option name or variable.
      const LongOption* meant = opt != nullptr && opt->settable()
                                    ? opt
                                    : ClosestLongOption(name, true);
      std::string hint;
      if (meant != nullptr) {
        hint = std::string("did you mean ") +
               (name != key ? EnvName(*meant) : std::string(meant->name)) +
               "? ";
      }
      return UsageError(where, "unknown setting \"" + Printable(key) + "\"",
                        hint + "known: " + known);
    }
    if (value.empty()) continue;
    out.push_back(
        Setting{opt, std::string(value), where + ": " + name, Layer::kFile});
  }
  return out;
}

/// Reads the config file: --config, else $K8S_AGENT_CONFIG, else the
/// default path, which alone may be missing.
StatusOr<std::vector<Setting>> ReadConfigFile(
    const std::string& config_flag,
    const std::map<std::string, std::string>& env,
    const std::function<StatusOr<std::string>(const std::string&)>& read_file,
    std::string* used_path) {
  std::string path = kDefaultConfigPath;
  std::string named_by;
  auto it = env.find(kConfigEnv);
  if (!config_flag.empty()) {
    path = config_flag;
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
// The mode.

/// Settles --format for `mode`, whose formats are `first` (the default)
/// and `second`. A format of the other mode is an error on the command
/// line; from the environment or the file it is a default meant for the
/// other mode, so it gives way with a note.
Status SettleFormat(ParseState* p, const std::string& mode, const char* kind,
                    OutputFormat first, OutputFormat second) {
  Options& o = p->options;
  o.format = first;
  if (!p->format_given) return OkStatus();
  if (p->format == first || p->format == second) {
    o.format = p->format;
    return OkStatus();
  }
  const std::string name = FormatName(p->format);
  const std::string why = std::string("not a ") + kind + " format";
  if (p->format_layer == Layer::kCommandLine) {
    return UsageError(
        mode + " --format " + name, why,
        std::string("use ") + FormatName(first) + " or " + FormatName(second));
  }
  AddNote(&o.notes, "ignoring " + Quoted(p->format_origin, name) + " for " +
                        mode + ": " + why + "; using " + FormatName(first));
  return OkStatus();
}

Status ValidateReport(ParseState* p) {
  const Options& o = p->options;
  if (o.hostfile || o.wait_only) {
    return UsageError("--report with --hostfile or --wait-only", "both given",
                      "use one mode");
  }
  if (o.hosts.empty()) {
    return UsageError(
        "--report", "no trace file given",
        "usage: k8s-agent --report TRACE...; " + std::string(kSeeHelp));
  }
  return SettleFormat(p, "--report", "report", OutputFormat::kText,
                      OutputFormat::kJson);
}

Status ValidateMode(ParseState* p) {
  if (p->options.report) return ValidateReport(p);
  Options& o = p->options;
  if (!o.chrome_file.empty() || !o.svg_file.empty()) {
    return UsageError("--chrome / --svg", "given without --report",
                      "use k8s-agent --report TRACE... --svg FILE");
  }
  if (o.hostfile && o.wait_only) {
    return UsageError("--hostfile and --wait-only", "both given", "use one");
  }
  if (o.slots > 0 && !o.slots_from_resource.empty()) {
    return UsageError("--slots and --slots-from-resource", "both given",
                      "use one");
  }
  if (o.hostfile) {
    K8S_RETURN_IF_ERROR(SettleFormat(p, "--hostfile", "hostfile",
                                     OutputFormat::kOpenMpi,
                                     OutputFormat::kHorovod));
    if (!o.hosts.empty()) {
      return UsageError(Quoted("--hostfile", o.hosts.front()), "takes no HOST",
                        "--hostfile lists the pods matching --selector");
    }
    return OkStatus();
  }
  if (o.slots > 0 || !o.slots_from_resource.empty() || o.ssh_ready ||
      o.wait_for_count > 0 ||
      (p->format_given && p->format != OutputFormat::kOpenMpi)) {
    AddNote(&o.notes,
            "ignoring --slots, --slots-from-resource, --ssh-ready, "
            "--wait-for-count and --format: they apply to --hostfile only");
  }
  if (o.hosts.empty()) {
    return UsageError("no HOST given", "k8s-agent needs a pod to run on",
                      "usage: k8s-agent [options] [user@]HOST COMMAND...; " +
                          std::string(kSeeHelp));
  }
  o.host = o.hosts.front();
  if (o.wait_only) return OkStatus();
  if (Trim(o.command).empty()) {
    return UsageError(
        "no remote command",
        "k8s-agent runs commands, it has no interactive shell",
        "give the command after HOST, e.g. k8s-agent " + o.host + " hostname");
  }
  return OkStatus();
}

}  // namespace

StatusOr<Options> ParseOptions(
    const std::vector<std::string>& args,
    const std::map<std::string, std::string>& env,
    const std::function<StatusOr<std::string>(const std::string& path)>&
        read_file) {
  ParseState p;
  Options& o = p.options;
  o.fail_on_reasons = DefaultFatalReasons();
  std::vector<Setting> from_argv;
  K8S_RETURN_IF_ERROR(ScanArgs(args, &p, &from_argv));
  // Answer even when the environment or the config file is broken.
  if (o.help || o.version) return std::move(o);

  K8S_ASSIGN_OR_RETURN(
      std::vector<Setting> from_file,
      ReadConfigFile(p.config_path, env, read_file, &o.config_file));
  std::vector<Setting> from_env = SettingsFromEnv(env, &o.notes);
  // Lowest precedence first: later settings overwrite earlier ones.
  for (const auto* layer : {&from_file, &from_env, &from_argv}) {
    for (const Setting& s : *layer) K8S_RETURN_IF_ERROR(s.opt->set(s, &p));
  }
  // After every layer, so -o LogLevel and --verbose take the larger of the
  // two, not their sum (--verbose is a command-line setting, applied above).
  if (o.ssh.log_level) ApplyLogLevel(*o.ssh.log_level, &p);
  if (p.quiet) o.quiet = true;
  if (p.verbose_count > 0) o.verbosity = std::min(p.verbose_count, 2);
  o.command = Join(o.command_words, " ");
  K8S_RETURN_IF_ERROR(ValidateMode(&p));
  return std::move(o);
}

}  // namespace k8s_agent
