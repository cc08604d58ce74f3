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
  if (key.empty() || value.empty()) {
    return UsageError(what, "expected Key=Value", "e.g. -o ConnectTimeout=5");
  }
  // ApplySshOption keeps the first value of each key, as ssh does.
  bool known = true;
  Status status = ssh::ApplySshOption(key, value, &p->options.ssh, &known);
  if (!status.ok()) {
    return UsageError(what, status.message(), "fix the value or drop the -o");
  }
  if (!known) {
    AddNote(&p->options.notes,
            "ignoring ssh option " + key + " (not used by k8s-agent)");
  }
  return OkStatus();
}

Status SetNoStdin(char, const std::string&, ParseState* p) {
  p->options.ssh.no_stdin = true;
  return OkStatus();
}

Status SetQuiet(char, const std::string&, ParseState* p) {
  p->quiet = true;
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
     "puts first). ConnectionAttempts and BatchMode are accepted and need "
     "nothing: k8s-agent retries until --timeout and never prompts (so "
     "BatchMode=no acts as yes). Other keys are ignored (shown with -vv)",
     SetDashO},
    {'n', nullptr, "-n", "read no stdin", SetNoStdin},
    {'q', nullptr, "-q", "quiet: errors only, no progress lines", SetQuiet},
    {'v', nullptr, "-v", "verbose: each phase with timings; -vv: debug",
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
