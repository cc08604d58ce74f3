// SPDX-License-Identifier: Apache-2.0
// ssh's short options, as Open MPI's plm_rsh_args and hydra pass them:
// one entry each, with its --help line and its setter.

#include <algorithm>
#include <string_view>

#include "launcher/option_table.h"
#include "plugin/base/strings.h"
#include "plugin/ssh/ssh_options.h"

namespace k8s_agent {
namespace {

std::string Flag(char flag) { return std::string("-") + flag; }

Status SetPort(char flag, const std::string& value, ParseState* p) {
  StatusOr<int> port = ParseInt(value);
  if (!port.ok() || *port < 1 || *port > 65535) {
    return UsageError(Quoted(Flag(flag), value), "invalid port",
                      "use a number from 1 to 65535");
  }
  // The first value wins, as in ssh.
  if (!p->options.ssh.port) p->options.ssh.port = *port;
  return OkStatus();
}

Status SetUser(char flag, const std::string& value, ParseState* p) {
  if (value.empty()) {
    return UsageError(Quoted(Flag(flag), value), "empty user name",
                      "use -l USER");
  }
  if (!p->options.ssh.user) p->options.ssh.user = value;
  return OkStatus();
}

Status AddIdentity(char flag, const std::string& value, ParseState* p) {
  if (value.empty()) {
    return UsageError(Quoted(Flag(flag), value), "empty file name",
                      "use -i IDENTITY_FILE");
  }
  p->options.ssh.identity_files.push_back(value);
  return OkStatus();
}

/// -o "Key=Value", "Key Value" or "Key = Value", as ssh_config lines.
Status SetDashO(char flag, const std::string& arg, ParseState* p) {
  const std::string what = Quoted(Flag(flag), arg);
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
  if (key.empty()) {
    return UsageError(what, "expected Key=Value", "e.g. -o ConnectTimeout=5");
  }
  if (value.empty()) {
    // What PRRTE (Open MPI 5 and 6) leaves of "-o Key=Value" on the
    // command line of a tree-spawned prted: it cuts each forwarded value at
    // its first '='. An agent started by another k8s-agent completes it
    // (tree_settings.h); one started by ssh or by hand cannot.
    return UsageError(
        what, "no value (expected Key=Value)",
        "if a worker's prted ran this, PRRTE cut plm_ssh_args at its first "
        "'=' (Open MPI 5.0.x, 6.0): launch with k8s-agent on the launcher "
        "too, or put the setting in an ssh_config file (--ssh-config, "
        "K8S_AGENT_SSH_CONFIG) or a K8S_AGENT_* variable instead of "
        "plm_ssh_args");
  }
  // The first value of each key wins, as in ssh; unknown keys fail, as
  // in ssh (IgnoreUnknown, given first, covers them).
  std::string note;
  Status status = ssh::ApplySshSetting(key, value, &p->options.ssh, &note);
  if (!status.ok()) {
    return UsageError(what, status.message(), "fix the value or drop the -o");
  }
  if (!note.empty()) AddNote(&p->options.notes, "-o " + note);
  return OkStatus();
}

/// -c, -m, -b: short spellings of an ssh_config key.
Status SetAsKeyword(char flag, const std::string& value, ParseState* p) {
  const char* key = flag == 'c'   ? "Ciphers"
                    : flag == 'm' ? "MACs"
                                  : "BindAddress";
  Status status = ssh::ApplySshOption(key, value, &p->options.ssh);
  if (!status.ok()) {
    return UsageError(Quoted(Flag(flag), value), status.message(),
                      std::string("fix the value of ") + Flag(flag));
  }
  return OkStatus();
}

/// -F FILE: this ssh_config alone, as with ssh ("none": no file at all).
Status SetConfigFile(char flag, const std::string& value, ParseState* p) {
  if (value.empty()) {
    return UsageError(Quoted(Flag(flag), value), "empty file name",
                      "use -F FILE or -F none");
  }
  if (p->options.ssh_config_only.empty()) p->options.ssh_config_only = value;
  return OkStatus();
}

/// -E FILE: the log goes to FILE (appended) instead of stderr.
Status SetLogFile(char flag, const std::string& value, ParseState* p) {
  if (value.empty()) {
    return UsageError(Quoted(Flag(flag), value), "empty file name",
                      "use -E LOG_FILE");
  }
  if (p->options.log_file.empty()) p->options.log_file = value;
  return OkStatus();
}

/// An ssh flag whose meaning k8s-agent cannot provide: refused, saying
/// why, rather than a launch that silently does something else.
Status Refuse(char flag, const std::string& value, ParseState*) {
  std::string why;
  switch (flag) {
    case 'J':
    case 'W':
      why =
          "k8s-agent connects to the pod IP directly, never through a "
          "jump host or a stdio forward";
      break;
    case 'L':
    case 'R':
    case 'D':
    case 'w':
      why = "k8s-agent never forwards ports or tunnels";
      break;
    case 'N':
    case 'f':
    case 's':
      why = "k8s-agent runs the command it is given, in the foreground";
      break;
    case 'O':
      why = "k8s-agent never shares connections, so there is no master";
      break;
    case 'B':
      why = "k8s-agent cannot bind to an interface (-b ADDRESS works)";
      break;
    case 'I':
      why = "k8s-agent reads keys from files only (-i)";
      break;
    default:  // G Q P
      why = "k8s-agent is a launch agent, not a general ssh client";
      break;
  }
  std::string what = value.empty() ? Flag(flag) : Quoted(Flag(flag), value);
  return UsageError(what, "not supported: " + why,
                    "remove it from plm_rsh_args / the agent's command line");
}

Status SetNoStdin(char, const std::string&, ParseState* p) {
  p->options.ssh.no_stdin = true;
  return OkStatus();
}

Status SetQuiet(char, const std::string&, ParseState* p) {
  p->quiet = true;
  return OkStatus();
}

Status SetVersion(char, const std::string&, ParseState* p) {
  p->options.version = true;
  return OkStatus();
}

/// -h: ssh has no -h (it prints its usage for any unknown flag), so no
/// plm_rsh_args can carry one; a person typing it wants the help.
Status SetHelp(char, const std::string&, ParseState* p) {
  p->options.help = true;
  return OkStatus();
}

Status AddVerbose(char, const std::string&, ParseState* p) {
  ++p->verbose_count;
  return OkStatus();
}

/// A flag ssh has and k8s-agent does without: a note at -vv says why.
Status Ignore(char flag, const std::string&, ParseState* p) {
  std::string why;
  switch (flag) {
    case 't':
      why = ": k8s-agent never requests a pty (Open MPI needs none)";
      break;
    case 'x':
    case 'X':
      why = ": k8s-agent never forwards X11";
      break;
    case 'a':
    case 'A':
      why = ": k8s-agent never forwards the ssh agent";
      break;
    case 'e':
      why = ": escape characters need a pty, and k8s-agent has none";
      break;
    case 'S':
    case 'M':
      why =
          ": k8s-agent never shares connections (each launch has its own "
          "session)";
      break;
    case 'y':
      why = ": k8s-agent logs to stderr (or -E FILE), never to syslog";
      break;
    case 'g':
      why = ": k8s-agent never forwards ports";
      break;
    case 'K':
      why = ": k8s-agent authenticates with keys only";
      break;
    default:  // T 4 6 k C
      AddNote(&p->options.notes, "ignoring ssh flag " + Flag(flag));
      return OkStatus();
  }
  AddNote(&p->options.notes, "ignoring " + Flag(flag) + why);
  return OkStatus();
}

constexpr ShortFlag kShortFlags[] = {
    {'p', "PORT", "-p PORT", "sshd port on the pod (default 22)", SetPort},
    {'l', "USER", "-l USER",
     "remote user (or USER@HOST; default: the passwd name of the local uid, "
     "as in ssh)",
     SetUser},
    {'i', "FILE", "-i FILE",
     "private key file; repeatable (default: ~/.ssh/id_ed25519, id_ecdsa, "
     "id_rsa)",
     AddIdentity},
    {'o', "KEY=VALUE", "-o KEY=VALUE, -o 'KEY VALUE'",
     "ssh_config setting: Port, User, IdentityFile, StrictHostKeyChecking, "
     "UserKnownHostsFile, LogLevel, ConnectTimeout, ServerAliveInterval, "
     "ServerAliveCountMax, Ciphers, KexAlgorithms, MACs, "
     "HostKeyAlgorithms (default: OpenSSH 9's; +x appends, -x removes, ^x "
     "puts first), HostName, HostKeyAlias, GlobalKnownHostsFile, "
     "BindAddress, StdinNull, IgnoreUnknown. ConnectionAttempts and "
     "BatchMode are accepted and need nothing: k8s-agent retries until "
     "--timeout and never prompts (so BatchMode=no acts as yes). Other "
     "OpenSSH keys that need nothing (ForwardAgent, ControlMaster, ...) are "
     "accepted (shown with -vv); ProxyJump, ProxyCommand, SetEnv, "
     "CertificateFile and the like are refused, and unknown keys fail, as "
     "in ssh",
     SetDashO},
    {'F', "FILE", "-F FILE",
     "read this ssh_config only, as ssh does (not ~/.ssh/config nor "
     "/etc/ssh/ssh_config; -F none: no file)",
     SetConfigFile},
    {'c', "CIPHERS", "-c CIPHERS", "as -o Ciphers=CIPHERS", SetAsKeyword},
    {'m', "MACS", "-m MACS", "as -o MACs=MACS", SetAsKeyword},
    {'b', "ADDRESS", "-b ADDRESS",
     "as -o BindAddress=ADDRESS: the source address of the connection",
     SetAsKeyword},
    {'E', "FILE", "-E FILE", "append the log to FILE instead of stderr",
     SetLogFile},
    {'n', nullptr, "-n", "read no stdin", SetNoStdin},
    {'q', nullptr, "-q", "quiet: errors only, no progress lines", SetQuiet},
    {'V', nullptr, "-V", "print the version and exit (as --version)",
     SetVersion},
    {'h', nullptr, "-h", "print this help and exit (as --help)", SetHelp},
    {'v', nullptr, "-v",
     "verbose: each phase with timings, every line starting with its UTC "
     "time of day (HH:MM:SS.mmm); -vv: debug",
     AddVerbose},
    {'t', nullptr, "-t, -tt", "ignored: k8s-agent never requests a pty",
     Ignore},
    {'x', nullptr, nullptr, nullptr, Ignore},
    {'X', nullptr, nullptr, nullptr, Ignore},
    {'T', nullptr, nullptr, nullptr, Ignore},
    {'4', nullptr, nullptr, nullptr, Ignore},
    {'6', nullptr, nullptr, nullptr, Ignore},
    {'a', nullptr, nullptr, nullptr, Ignore},
    {'A', nullptr, nullptr, nullptr, Ignore},
    {'k', nullptr, nullptr, nullptr, Ignore},
    {'C', nullptr, nullptr, nullptr, Ignore},
    {'e', "CHAR", nullptr, nullptr, Ignore},
    {'S', "PATH", nullptr, nullptr, Ignore},
    {'M', nullptr, nullptr, nullptr, Ignore},
    {'y', nullptr, nullptr, nullptr, Ignore},
    {'g', nullptr, nullptr, nullptr, Ignore},
    {'K', nullptr, nullptr, nullptr, Ignore},
    // ssh flags k8s-agent refuses (--help lists them, with why).
    {'J', "DESTINATION", nullptr, nullptr, Refuse, true},
    {'W', "HOST:PORT", nullptr, nullptr, Refuse, true},
    {'L', "SPEC", nullptr, nullptr, Refuse, true},
    {'R', "SPEC", nullptr, nullptr, Refuse, true},
    {'D', "SPEC", nullptr, nullptr, Refuse, true},
    {'w', "TUN", nullptr, nullptr, Refuse, true},
    {'O', "CMD", nullptr, nullptr, Refuse, true},
    {'B', "IFACE", nullptr, nullptr, Refuse, true},
    {'I', "LIB", nullptr, nullptr, Refuse, true},
    {'Q', "QUERY", nullptr, nullptr, Refuse, true},
    {'P', "TAG", nullptr, nullptr, Refuse, true},
    {'N', nullptr, nullptr, nullptr, Refuse, true},
    {'f', nullptr, nullptr, nullptr, Refuse, true},
    {'s', nullptr, nullptr, nullptr, Refuse, true},
    {'G', nullptr, nullptr, nullptr, Refuse, true},
};

}  // namespace

TableView<ShortFlag> ShortFlags() {
  return {kShortFlags, sizeof(kShortFlags) / sizeof(kShortFlags[0])};
}

const ShortFlag* FindShortFlag(char flag) {
  for (const ShortFlag& f : kShortFlags) {
    if (f.flag == flag) return &f;
  }
  return nullptr;
}

// "-o LogLevel=ERROR", common in plm_rsh_args, quiets k8s-agent as it
// quiets ssh.
void ApplyLogLevel(const std::string& level, ParseState* state) {
  if (level == "quiet" || level == "fatal" || level == "error") {
    state->quiet = true;
  } else if (level == "verbose" || level == "debug" || level == "debug1") {
    state->verbose_count = std::max(state->verbose_count, 1);
  } else if (level == "debug2" || level == "debug3") {
    state->verbose_count = std::max(state->verbose_count, 2);
  }
}

std::vector<std::string> SshSettingNotes(const ssh::SshOptions& merged) {
  std::vector<std::string> notes;
  if (merged.connection_attempts) {
    notes.push_back(
        "ConnectionAttempts=" + std::to_string(*merged.connection_attempts) +
        ": k8s-agent retries the SSH connection with backoff "
        "until --timeout instead (the pod's sshd may still be "
        "starting); permanent failures still fail at once");
  }
  if (merged.batch_mode && !*merged.batch_mode) {
    notes.push_back(
        "BatchMode=no: k8s-agent never prompts for a password or passphrase, "
        "so it acts as BatchMode=yes");
  }
  return notes;
}

}  // namespace k8s_agent
