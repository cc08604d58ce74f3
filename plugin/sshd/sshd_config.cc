// SPDX-License-Identifier: Apache-2.0
#include "plugin/sshd/sshd_config.h"

#include <algorithm>

#include "plugin/base/strings.h"

namespace k8s_agent::sshd {
namespace {

constexpr const char* kLogLevels[] = {"QUIET",  "FATAL",   "ERROR",
                                      "INFO",   "VERBOSE", "DEBUG",
                                      "DEBUG1", "DEBUG2",  "DEBUG3"};

// One argument in double quotes: sshd (every version since quotes were
// read), ssh and k8s-agent's config reader take it whole, spaces and all.
// CheckConfigPath has refused what quotes cannot hold.
std::string Quoted(const std::string& path) { return "\"" + path + "\""; }

// For the keywords whose value is token-expanded (sshd's
// AuthorizedKeysFile; ssh's IdentityFile, UserKnownHostsFile): a literal
// '%' is "%%".
std::string TokenQuoted(const std::string& path) {
  std::string out;
  for (char c : path) {
    out += c;
    if (c == '%') out += '%';
  }
  return Quoted(out);
}

}  // namespace

Status CheckLogLevel(const std::string& level) {
  // sshd reads the level case-insensitively; a newline in it would be a
  // line of config of its own.
  if (std::any_of(std::begin(kLogLevels), std::end(kLogLevels),
                  [&level](const char* known) {
                    return ToLower(known) == ToLower(level);
                  })) {
    return OkStatus();
  }
  return InvalidArgumentError(
      "--log-level " + Printable(level) + ": not one of sshd's levels " +
      "(QUIET, FATAL, ERROR, INFO, VERBOSE, DEBUG, DEBUG1, DEBUG2, DEBUG3)");
}

Status CheckConfigPath(const std::string& what, const std::string& path) {
  std::string bad;
  for (size_t i = 0; i < path.size() && bad.empty(); ++i) {
    unsigned char c = static_cast<unsigned char>(path[i]);
    if (c == '"') {
      bad = "a double quote";
    } else if (c == '\\') {
      bad = "a backslash";
    } else if (c < 0x20 || c == 0x7f) {
      bad = c == '\n' ? "a newline" : "a control character";
    } else if (c == '$' && i + 1 < path.size() && path[i + 1] == '{') {
      bad = "\"${\"";
    }
  }
  if (bad.empty()) return OkStatus();
  return FailedPreconditionError(
      what + " " + Printable(path) + " has " + bad + ", which sshd_config " +
      "and ssh_config cannot hold in a path (sshd before 8.7 and k8s-agent " +
      "read no escapes, ssh expands ${...}): use a path without \", \\, " +
      "${ or control characters");
}

StatusOr<std::string> RenderSshdConfig(const SshdSettings& s) {
  const std::pair<const char*, const std::string*> paths[] = {
      {"HostKey", &s.host_key_file},
      {"AuthorizedKeysFile", &s.authorized_keys_file},
      {"PidFile", &s.pid_file},
      {"SshdSessionPath", &s.session_path},
      {"SshdAuthPath", &s.auth_path}};
  for (const auto& [key, path] : paths) {
    K8S_RETURN_IF_ERROR(
        CheckConfigPath(std::string("sshd_config ") + key, *path));
  }
  K8S_RETURN_IF_ERROR(CheckLogLevel(s.log_level));
  std::string c = "# Written by k8s-agent-sshd at start; not read again.\n";
  auto line = [&c](const std::string& key, const std::string& value) {
    c += key + " " + value + "\n";
  };
  line("Port", std::to_string(s.port));
  line("HostKey", Quoted(s.host_key_file));
  line("AuthorizedKeysFile", TokenQuoted(s.authorized_keys_file));
  line("PidFile", Quoted(s.pid_file));
  if (!s.session_path.empty()) line("SshdSessionPath", Quoted(s.session_path));
  if (!s.auth_path.empty()) line("SshdAuthPath", Quoted(s.auth_path));
  line("AuthenticationMethods", "publickey");
  line("PubkeyAuthentication", "yes");
  line("PasswordAuthentication", "no");
  line("KbdInteractiveAuthentication", "no");
  line("HostbasedAuthentication", "no");
  line("PermitRootLogin", s.user == "root" ? "prohibit-password" : "no");
  line("AllowUsers", s.user);
  // The key files are copies this program made in its own 0700 directory;
  // StrictModes would also walk the directories above them, and /tmp
  // (where that directory lives) is world-writable.
  line("StrictModes", "no");
  line("DisableForwarding", "yes");
  line("PermitTunnel", "no");
  line("PermitUserEnvironment", "no");
  line("PermitUserRC", "no");
  line("PrintMotd", "no");
  line("UseDNS", "no");
  // mpirun starts up to 128 launches at once (plm_rsh_num_concurrent), and
  // the agent's readiness handshakes come before them: do not start
  // dropping unauthenticated connections at 10.
  line("MaxStartups", "200:30:400");
  // OpenSSH >= 9.8 penalises a source address for connections that end
  // before authentication: exactly what readiness probes do. Older sshd
  // does not know the keyword, so it goes only with sshd-session's path.
  if (!s.session_path.empty()) line("PerSourcePenalties", "no");
  line("LogLevel", s.log_level);
  if (!s.session_env.empty()) {
    std::string setenv;
    for (const auto& [name, value] : s.session_env) {
      setenv += " \"" + name + "=" + value + "\"";
    }
    line("SetEnv", setenv.substr(1));
  }
  return c;
}

std::vector<std::pair<std::string, std::string>> SessionEnvironment(
    const std::vector<std::string>& names,
    const std::vector<std::pair<std::string, std::string>>& env,
    std::vector<std::string>* skipped) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& name : names) {
    auto it = std::find_if(env.begin(), env.end(),
                           [&name](const auto& e) { return e.first == name; });
    // An empty LD_LIBRARY_PATH would mean "the current directory".
    if (it == env.end() || it->second.empty()) continue;
    if (it->second.find_first_of("\"\\\n") != std::string::npos) {
      if (skipped) skipped->push_back(name);
      continue;
    }
    bool seen = std::any_of(out.begin(), out.end(),
                            [&name](const auto& e) { return e.first == name; });
    if (!seen) out.push_back(*it);
  }
  return out;
}

StatusOr<std::string> RenderClientConfig(int port, const std::string& identity,
                                         const std::string& known_hosts) {
  K8S_RETURN_IF_ERROR(CheckConfigPath("IdentityFile", identity));
  K8S_RETURN_IF_ERROR(CheckConfigPath("UserKnownHostsFile", known_hosts));
  return "# Written by k8s-agent-sshd: for k8s-agent run by orted here.\n"
         "Host *\n"
         "  Port " +
         std::to_string(port) +
         "\n"
         "  IdentityFile " +
         TokenQuoted(identity) +
         "\n"
         "  IdentitiesOnly yes\n"
         "  UserKnownHostsFile " +
         TokenQuoted(known_hosts) +
         "\n"
         "  StrictHostKeyChecking yes\n"
         "  BatchMode yes\n";
}

std::string RenderKnownHosts(int port, const std::string& public_key) {
  // The file is private to the job and holds only the job's own host key,
  // so "*" trusts nothing else.
  return "*,[*]:" + std::to_string(port) + " " + public_key + "\n";
}

}  // namespace k8s_agent::sshd
