// SPDX-License-Identifier: Apache-2.0
// k8s-agent-sshd's option table, its argv scanner and its --help.

#include "launcher/sshd_options.h"

#include <cstddef>

#include "plugin/base/strings.h"
#include "plugin/base/usage_text.h"
#include "plugin/sshd/sshd_config.h"

namespace k8s_agent::sshd {
namespace {

constexpr char kSeeHelp[] = "see k8s-agent-sshd --help";

using O = SshdOptions*;
using V = const std::string&;

Status SetPort(V v, O o) {
  StatusOr<int> port = ParseInt(v);
  if (!port.ok() || *port < 1 || *port > 65535) {
    return UsageError("--port " + Printable(v), "not a port", "use 1-65535");
  }
  o->port = *port;
  return OkStatus();
}

Status SetSessionEnv(V v, O o) {
  for (const std::string& name : Split(v, ',')) {
    if (!name.empty()) o->session_env.push_back(name);
  }
  return OkStatus();
}

Status SetLogLevel(V v, O o) {
  K8S_RETURN_IF_ERROR(CheckLogLevel(v));
  o->log_level = v;
  return OkStatus();
}

// The paths may be given empty: that is the default (searched for, made
// afresh, or the one user there is).
const std::vector<SshdOption>& Table() {
  static const std::vector<SshdOption> kTable = {
      {"port", '\0', "N", "port to listen on (default 2222)", SetPort},
      {"keys", '\0', "DIR",
       "the mounted ssh Secret (default /etc/ssh-secret): k8s-agent's, "
       "mpi-operator's, Trainer's or Volcano's layout",
       [](V v, O o) {
         o->keys = v;
         return OkStatus();
       }},
      {"user", '\0', "NAME",
       "as root, the user to serve (default root); as another uid, only "
       "that uid's own user can be served",
       [](V v, O o) {
         o->user = v;
         return OkStatus();
       }},
      {"sshd", '\0', "PATH",
       "sshd to run, an absolute path (default: the one beside this "
       "program, else /usr/sbin/sshd)",
       [](V v, O o) {
         o->sshd = v;
         return OkStatus();
       }},
      {"run-dir", '\0', "DIR",
       "where its files and sshd.pid go (default: a fresh directory in "
       "$TMPDIR or /tmp)",
       [](V v, O o) {
         o->run_dir = v;
         return OkStatus();
       }},
      {"session-env", '\0', "NAME,...",
       "more variables to hand to every session, besides PATH, "
       "LD_LIBRARY_PATH, KUBERNETES_SERVICE_* and K8S_AGENT_* (may be "
       "given more than once)",
       SetSessionEnv},
      {"log-level", '\0', "LEVEL",
       "sshd's LogLevel: QUIET, FATAL, ERROR, INFO, VERBOSE, DEBUG, DEBUG1, "
       "DEBUG2 or DEBUG3 (default INFO)",
       SetLogLevel},
      {"help", 'h', nullptr, "this text",
       [](V, O o) {
         o->help = true;
         return OkStatus();
       }},
      {"version", 'V', nullptr, "print the version",
       [](V, O o) {
         o->version = true;
         return OkStatus();
       }},
  };
  return kTable;
}

const SshdOption* FindLong(std::string_view name) {
  for (const SshdOption& opt : Table()) {
    if (name == opt.name) return &opt;
  }
  return nullptr;
}

const SshdOption* FindShort(char flag) {
  for (const SshdOption& opt : Table()) {
    if (opt.short_name != '\0' && opt.short_name == flag) return &opt;
  }
  return nullptr;
}

/// One "--name", "--name=value" or "--name value" at args[*i]; advances *i
/// past what it used.
Status ScanLong(const std::vector<std::string>& args, size_t* i,
                SshdOptions* o) {
  const std::string& word = args[(*i)++];
  size_t eq = word.find('=');
  std::string name = word.substr(2, eq == std::string::npos ? eq : eq - 2);
  std::string flag = "--" + name;
  const SshdOption* opt = FindLong(name);
  if (opt == nullptr) {
    std::vector<std::string_view> names;
    for (const SshdOption& known : Table()) names.emplace_back(known.name);
    std::optional<size_t> meant = ClosestName(name, names);
    return UsageError(
        Printable(flag), "unknown option",
        meant ? "did you mean --" + std::string(names[*meant]) + "? " + kSeeHelp
              : std::string(kSeeHelp));
  }
  K8S_ASSIGN_OR_RETURN(
      std::string value,
      LongOptionValue(args, i, word, eq, flag, opt->arg, "", kSeeHelp));
  return opt->set(value, o);
}

/// A group of short flags ("-h", "-hV").
Status ScanShort(const std::string& word, SshdOptions* o) {
  for (size_t j = 1; j < word.size(); ++j) {
    const SshdOption* opt = FindShort(word[j]);
    if (opt == nullptr) {
      std::string name = std::string("-") + word[j];
      std::string what =
          word.size() > 2 ? name + " (in \"" + Printable(word) + "\")" : name;
      return UsageError(Printable(what), "unknown option",
                        "k8s-agent-sshd takes -h, -V and long options; " +
                            std::string(kSeeHelp));
    }
    K8S_RETURN_IF_ERROR(opt->set("", o));
  }
  return OkStatus();
}

constexpr char kIntro[] =
    "Usage: k8s-agent-sshd [options] [-- SSHD-ARG...]\n"
    "       k8s-agent-sshd --help (-h) | --version (-V)\n"
    "\n";

constexpr char kAbout[] =
    "Runs sshd in the foreground for an MPI job's workers, from the job's "
    "ssh Secret: copies its keys with the owners and modes sshd insists on "
    "into a private directory, writes sshd's config (key logins for one "
    "user) and the ssh client settings tree spawn needs, then becomes "
    "sshd -D -e, so an image needs no openssh-server, sshd user or host "
    "keys of its own.";

constexpr char kTail[] =
    "Words after \"--\", or from the first word that is not an option, are "
    "passed to sshd after its -D -e -f CONFIG. Exit status: sshd's, which "
    "replaces this program; 255 when k8s-agent-sshd fails before that "
    "(bad option, keys, user or sshd), with one line on stderr saying why.";

}  // namespace

const std::vector<SshdOption>& SshdOptionTable() { return Table(); }

StatusOr<SshdOptions> ParseSshdOptions(const std::vector<std::string>& args) {
  SshdOptions o;
  size_t i = 0;
  while (i < args.size()) {
    const std::string& word = args[i];
    if (word == "--") {
      ++i;
      break;
    }
    if (word.size() < 2 || word[0] != '-') break;  // sshd's words start.
    if (word[1] == '-') {
      K8S_RETURN_IF_ERROR(ScanLong(args, &i, &o));
    } else {
      K8S_RETURN_IF_ERROR(ScanShort(word, &o));
      ++i;
    }
  }
  o.sshd_args.assign(args.begin() + static_cast<ptrdiff_t>(i), args.end());
  return o;
}

std::string SshdUsageText() {
  std::string out = std::string(kIntro) + WrapText(kAbout, 0) + "\n\n" +
                    "Options (--name VALUE or --name=VALUE; the last one "
                    "given wins):\n";
  for (const SshdOption& opt : Table()) {
    std::string head;
    if (opt.short_name != '\0') head = std::string("-") + opt.short_name + ", ";
    head += std::string("--") + opt.name;
    if (opt.arg != nullptr) head += std::string(" ") + opt.arg;
    out += HelpLine(head, opt.help);
  }
  return out + "\n" + WrapText(kTail, 0) + "\n";
}

}  // namespace k8s_agent::sshd
