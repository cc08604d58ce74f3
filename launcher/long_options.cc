// SPDX-License-Identifier: Apache-2.0
// The long options: one entry each, with its --help line and its setter.

#include <algorithm>
#include <cctype>
#include <optional>
#include <vector>

#include "launcher/option_table.h"
#include "plugin/base/strings.h"

namespace k8s_agent {
namespace {

// ---------------------------------------------------------------------------
// Value checks the setters share.

Status EmptyValueError(const Setting& s) {
  return UsageError(Quoted(s.origin, s.value), "empty value",
                    "give a value, or leave the option out");
}

Status SetText(const Setting& s, std::string* field) {
  if (s.value.empty()) return EmptyValueError(s);
  *field = s.value;
  return OkStatus();
}

/// A mode flag: command line only, so always given without a value.
Status SetTrue(bool* field) {
  *field = true;
  return OkStatus();
}

Status SetBool(const Setting& s, bool* field) {
  std::string v = ToLower(Trim(s.value));
  if (v == "1" || v == "true" || v == "yes" || v == "on") {
    *field = true;
  } else if (v == "0" || v == "false" || v == "no" || v == "off") {
    *field = false;
  } else if (v.empty()) {
    return EmptyValueError(s);
  } else {
    return UsageError(Quoted(s.origin, s.value), "not a boolean",
                      "use true or false");
  }
  return OkStatus();
}

Status SetCount(const Setting& s, int* field) {
  if (s.value.empty()) return EmptyValueError(s);
  StatusOr<int> n = ParseInt(s.value);
  if (!n.ok() || *n < 1) {
    return UsageError(Quoted(s.origin, s.value), "not a whole number >= 1",
                      "use e.g. 4");
  }
  *field = *n;
  return OkStatus();
}

/// One accepted spelling of a mode value.
template <typename E>
struct Choice {
  const char* name;
  E value;
  const char* mode;  ///< The mode it belongs to, for the error; or null.
};

constexpr Choice<WaitFor> kWaitForChoices[] = {
    {"running", WaitFor::kRunning, nullptr},
    {"ready", WaitFor::kReady, nullptr},
};

constexpr Choice<OutputFormat> kFormatChoices[] = {
    {"openmpi", OutputFormat::kOpenMpi, "--hostfile"},
    {"horovod", OutputFormat::kHorovod, "--hostfile"},
    {"text", OutputFormat::kText, "--report"},
    {"json", OutputFormat::kJson, "--report"},
};

/// "running or ready"; with modes "openmpi or horovod (--hostfile), text
/// or json (--report)": the accepted values, for an error.
template <typename E, size_t N>
std::string Accepted(const Choice<E> (&choices)[N]) {
  auto mode = [&](size_t i) {
    return std::string_view(choices[i].mode ? choices[i].mode : "");
  };
  std::string out;
  for (size_t i = 0; i < N; ++i) {
    if (i > 0) out += mode(i) == mode(i - 1) ? " or " : ", ";
    out += choices[i].name;
    if ((i + 1 == N || mode(i + 1) != mode(i)) && !mode(i).empty()) {
      out += " (" + std::string(mode(i)) + ")";
    }
  }
  return out;
}

/// Parses a mode value once, case-insensitively; the error lists every
/// accepted value.
template <typename E, size_t N>
Status SetChoice(const Setting& s, const Choice<E> (&choices)[N],
                 const char* what_is_it, E* field) {
  if (s.value.empty()) return EmptyValueError(s);
  std::string v = ToLower(Trim(s.value));
  for (const Choice<E>& c : choices) {
    if (v == c.name) {
      *field = c.value;
      return OkStatus();
    }
  }
  return UsageError(Quoted(s.origin, s.value),
                    std::string("unknown ") + what_is_it,
                    "use " + Accepted(choices));
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
// Setters that are more than one check.

Status SetNamespace(const Setting& s, ParseState* p) {
  if (s.value.empty()) return EmptyValueError(s);
  if (!IsNamespaceName(s.value)) {
    return UsageError(Quoted(s.origin, s.value), "not a valid namespace name",
                      "lower-case letters, digits and '-', at most 63");
  }
  p->options.cluster.ns = s.value;
  return OkStatus();
}

Status SetPositiveDuration(const Setting& s, Duration* out) {
  if (s.value.empty()) return EmptyValueError(s);
  const std::string what = Quoted(s.origin, s.value);
  StatusOr<Duration> d = ParseDuration(s.value);
  if (!d.ok()) return UsageError(what, "invalid duration", "use e.g. 30s, 10m");
  if (*d <= Duration::zero()) {
    return UsageError(what, "must be positive", "use e.g. 30s, 10m");
  }
  *out = *d;
  return OkStatus();
}

// Bounded by the watch cache's history (about 75 s): an agent answered
// from the list watches from its resourceVersion, which must not be gone.
Status SetLookupCache(const Setting& s, ParseState* p) {
  if (s.value.empty()) return EmptyValueError(s);
  const std::string what = Quoted(s.origin, s.value);
  StatusOr<Duration> d = ParseDuration(s.value);
  if (!d.ok() || *d < Duration::zero() || *d > std::chrono::seconds(60)) {
    return UsageError(what, "not a duration from 0 to 60s",
                      "use e.g. 5s, or 0 for off");
  }
  p->options.lookup_cache = *d;
  return OkStatus();
}

Status SetTimeout(const Setting& s, ParseState* p) {
  return SetPositiveDuration(s, &p->options.timeout);
}

/// A comma-separated list, or "none" (or empty) for no reason at all.
Status SetFailOnReasons(const Setting& s, ParseState* p) {
  std::vector<std::string> reasons;
  if (ToLower(Trim(s.value)) != "none") {
    for (const std::string& part : Split(s.value, ',')) {
      std::string reason(Trim(part));
      if (reason.empty()) continue;
      if (!IsReasonName(reason)) {
        return UsageError(
            Quoted(s.origin, s.value),
            "\"" + Printable(reason) + "\" is not a reason name",
            "use e.g. ImagePullBackOff,CrashLoopBackOff, or none");
      }
      reasons.push_back(reason);
    }
  }
  p->options.fail_on_reasons = reasons;
  return OkStatus();
}

/// On the command line a flag that counts (-vv); elsewhere a level.
Status SetVerbose(const Setting& s, ParseState* p) {
  if (s.layer == Layer::kCommandLine) {
    ++p->verbose_count;
    return OkStatus();
  }
  StatusOr<int> n = ParseInt(s.value);
  bool flag = false;
  if (n.ok()) {
    p->options.verbosity = std::min(*n, 2);
  } else if (SetBool(s, &flag).ok()) {
    p->options.verbosity = flag ? 1 : 0;
  } else if (s.value.empty()) {
    return EmptyValueError(s);
  } else {
    return UsageError(Quoted(s.origin, s.value), "invalid verbosity",
                      "use 0, 1 or 2");
  }
  return OkStatus();
}

Status SetQuiet(const Setting& s, ParseState* p) {
  if (s.layer == Layer::kCommandLine) {
    p->quiet = true;
    return OkStatus();
  }
  return SetBool(s, &p->options.quiet);
}

/// Kept with its origin: which modes it fits is known only at the end.
Status SetFormat(const Setting& s, ParseState* p) {
  K8S_RETURN_IF_ERROR(SetChoice(s, kFormatChoices, "format", &p->format));
  p->format_given = true;
  p->format_layer = s.layer;
  p->format_origin = s.origin;
  return OkStatus();
}

Status SetConfig(const Setting& s, ParseState* p) {
  if (s.value.empty()) {
    return UsageError(Quoted(s.origin, s.value), "empty file name",
                      "use --config FILE");
  }
  p->config_path = s.value;
  return OkStatus();
}

// ---------------------------------------------------------------------------
// The table.

// Short names keep the one-line setters below on one line each.
using S = const Setting&;
using P = ParseState*;
constexpr OptionSource kAnywhere = OptionSource::kAnywhere;
constexpr OptionSource kCommandLine = OptionSource::kCommandLine;
constexpr OptionSource kScan = OptionSource::kScan;

constexpr LongOption kLongOptions[] = {
    {"namespace", "NS", kAnywhere,
     "namespace of the pods (default: a DNS HOST's third label, else the "
     "kubeconfig context's, else the service account's, else default)",
     SetNamespace},
    {"kubeconfig", "FILE", kAnywhere,
     "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else "
     "in-cluster)",
     [](S s, P p) { return SetText(s, &p->options.cluster.kubeconfig); }},
    {"server", "URL", kAnywhere,
     "API server URL, e.g. https://10.96.0.1:443 (holds ':': under Open MPI "
     "set it through K8S_AGENT_SERVER or the config file)",
     [](S s, P p) { return SetText(s, &p->options.cluster.server); }},
    {"token-file", "FILE", kAnywhere,
     "bearer token file, re-read when it changes (default in a pod: the "
     "service account token)",
     [](S s, P p) { return SetText(s, &p->options.cluster.token_file); }},
    {"certificate-authority", "FILE", kAnywhere,
     "CA bundle that signed the API server's certificate",
     [](S s, P p) {
       return SetText(s, &p->options.cluster.certificate_authority);
     }},
    {"selector", "LABELS", kAnywhere,
     "label selector the pods must match, e.g. role=worker",
     [](S s, P p) { return SetText(s, &p->options.selector); }},
    {"timeout", "DURATION", kAnywhere,
     "how long to wait for each host's pod to be Running and answer SSH "
     "(default 10m; e.g. 30s, 10m, 1h30m)",
     SetTimeout},
    {"api-first-answer-timeout", "DURATION", kAnywhere,
     "fail this soon when the API server has not answered once (wrong "
     "--server, kubeconfig or KUBERNETES_SERVICE_HOST; default 30s); once it "
     "has answered, outages are waited out up to --timeout; also how long "
     "one request may go without a byte (at least 30s) before it is retried",
     [](S s, P p) {
       return SetPositiveDuration(s, &p->options.api_first_answer_timeout);
     }},
    {"watch-idle-timeout", "DURATION", kAnywhere,
     "reconnect a watch that brought no event for this long (the API server "
     "sends a bookmark about every minute; default 90s); over HTTP/2 a PING "
     "after a third of it with nothing read, unanswered for a sixth, finds a "
     "stopped server sooner (30s + 15s by default, as client-go)",
     [](S s, P p) {
       return SetPositiveDuration(s, &p->options.watch_idle_timeout);
     }},
    {"lookup-cache", "DURATION", kAnywhere,
     "share one namespace list among this user's agents: the first agent "
     "of a burst lists the pods once, the others are answered from it while "
     "it is younger than DURATION, with no connection to the API server of "
     "their own (0 = off, the default; at most 60s; 5s suits mpirun)",
     SetLookupCache},
    {"wait-for", "STATE", kAnywhere,
     "running: phase Running with a pod IP (default); ready: also the Ready "
     "condition",
     [](S s, P p) {
       return SetChoice(s, kWaitForChoices, "state", &p->options.wait_for);
     }},
    {"fail-on-reasons", "LIST", kAnywhere,
     "comma-separated container waiting reasons that fail the wait at once, "
     "or none (default: @DEFAULT_REASONS@)",
     SetFailOnReasons},
    {"trace", "FILE", kAnywhere,
     "append one JSON line per phase per host (begin, resolved, pod_status, "
     "pod_running, ssh_ready, started, exited, failed); many agents may "
     "share the file; read it with --report",
     [](S s, P p) { return SetText(s, &p->options.trace_file); }},
    {"ssh-config", "FILE", kAnywhere,
     "ssh client settings to read instead of ~/.ssh/config (then "
     "/etc/ssh/ssh_config), e.g. where HOME is read-only",
     [](S s, P p) { return SetText(s, &p->options.ssh_config_file); }},
    {"verbose", nullptr, kAnywhere,
     "same as -v (K8S_AGENT_VERBOSE=N sets the level: 1 or 2)", SetVerbose},
    {"quiet", nullptr, kAnywhere, "same as -q", SetQuiet},
    {"wait-only", nullptr, kScan,
     "wait until every HOST is Running and answers SSH, run nothing; all "
     "words after the options are HOSTs",
     [](S, P p) { return SetTrue(&p->options.wait_only); }},
    {"hostfile", nullptr, kScan,
     "print an Open MPI hostfile (\"NAME slots=N\" lines; stdout holds "
     "nothing else) of the pods matching --selector that are Running with "
     "an IP and not terminating, in stable order (by ordinal: w-2 before "
     "w-10); with --format horovod it serves as a Horovod "
     "--host-discovery-script",
     [](S, P p) { return SetTrue(&p->options.hostfile); }},
    {"slots", "N", kAnywhere,
     "--hostfile: slots=N on every line (default: no slots field, so Open "
     "MPI counts cores and horovodrun uses its --slots-per-host)",
     [](S s, P p) { return SetCount(s, &p->options.slots); }},
    {"slots-from-resource", "NAME", kAnywhere,
     "--hostfile: slots from the sum of the pod's containers' "
     "resources.limits NAME (else requests), e.g. nvidia.com/gpu; pods "
     "without it are skipped, with a note on stderr",
     [](S s, P p) { return SetText(s, &p->options.slots_from_resource); }},
    {"format", "FORMAT", kAnywhere,
     "--hostfile: openmpi (\"NAME slots=N\", default) or horovod "
     "(\"NAME:N\", the --host-discovery-script format); --report: text "
     "(default) or json. Set in the environment or the file, a format of "
     "the other mode gives way to this mode's default",
     SetFormat},
    {"ssh-ready", nullptr, kAnywhere,
     "--hostfile: list only pods whose sshd completes a handshake",
     [](S s, P p) { return SetBool(s, &p->options.ssh_ready); }},
    {"wait-for-count", "N", kAnywhere,
     "--hostfile: first wait (watching, up to --timeout; on expiry exit 255 "
     "naming the pods not ready and why) until N pods qualify",
     [](S s, P p) { return SetCount(s, &p->options.wait_for_count); }},
    {"report", nullptr, kScan,
     "print where each host's start-up time went, from --trace files (all "
     "words after the options are trace files, e.g. the launcher's and the "
     "workers' under tree spawn); --format json for tools; exit 255 if a "
     "file is unreadable or holds no trace record",
     [](S, P p) { return SetTrue(&p->options.report); }},
    {"chrome", "FILE", kCommandLine,
     "--report: also write Chrome trace-event JSON (ui.perfetto.dev, "
     "chrome://tracing): a track per host, a span per phase",
     [](S s, P p) { return SetText(s, &p->options.chrome_file); }},
    {"svg", "FILE", kCommandLine,
     "--report: also write a Gantt chart (SVG, a row per host)",
     [](S s, P p) { return SetText(s, &p->options.svg_file); }},
    {"config", "FILE", kScan,
     "config file (default: $K8S_AGENT_CONFIG, else /etc/k8s-agent.conf)",
     SetConfig},
    {"help", nullptr, kScan, "print this help and exit",
     [](S, P p) { return SetTrue(&p->options.help); }},
    {"version", nullptr, kScan, "print the version and exit",
     [](S, P p) { return SetTrue(&p->options.version); }},
};

}  // namespace

TableView<LongOption> LongOptions() {
  return {kLongOptions, sizeof(kLongOptions) / sizeof(kLongOptions[0])};
}

const LongOption* FindLongOption(std::string_view name) {
  for (const LongOption& opt : kLongOptions) {
    if (name == opt.name) return &opt;
  }
  return nullptr;
}

const LongOption* ClosestLongOption(std::string_view name, bool settable_only) {
  std::vector<const LongOption*> eligible;
  std::vector<std::string_view> names;
  for (const LongOption& opt : kLongOptions) {
    if (settable_only && !opt.settable()) continue;
    eligible.push_back(&opt);
    names.emplace_back(opt.name);
  }
  std::optional<size_t> meant = ClosestName(name, names);
  return meant ? eligible[*meant] : nullptr;
}

std::string EnvName(const LongOption& opt) {
  std::string out = kEnvPrefix;
  for (const char* c = opt.name; *c != '\0'; ++c) {
    out +=
        *c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<int>(*c)));
  }
  return out;
}

const char* FormatName(OutputFormat format) {
  for (const Choice<OutputFormat>& c : kFormatChoices) {
    if (c.value == format) return c.name;
  }
  return "?";
}

std::string Quoted(const std::string& what, const std::string& value) {
  return what + " \"" + Printable(value) + "\"";
}

void AddNote(std::vector<std::string>* notes, const std::string& note) {
  if (!Contains(*notes, note)) notes->push_back(note);
}

}  // namespace k8s_agent
