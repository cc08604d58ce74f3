// SPDX-License-Identifier: Apache-2.0
// ssh option parsing (-o, ssh_config) and defaults, with ssh's precedence.

#include "plugin/ssh/ssh_options.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>

#include "plugin/base/home_dir.h"
#include "plugin/base/log.h"
#include "plugin/base/strings.h"
#include "plugin/ssh/file_tokens.h"
#include "plugin/ssh/ssh_keywords.h"

namespace k8s_agent::ssh {
namespace {

StatusOr<bool> ParseYesNo(const std::string& key, const std::string& value) {
  std::string v = ToLower(value);
  if (v == "yes" || v == "true") return true;
  if (v == "no" || v == "false") return false;
  return InvalidArgumentError(key + ": expected yes or no, got \"" +
                              Printable(value) + "\"");
}

StatusOr<int> ParseBoundedInt(const std::string& key, const std::string& value,
                              int min, int max) {
  StatusOr<int> n = ParseInt(value);
  if (!n.ok() || *n < min || *n > max) {
    return InvalidArgumentError(
        key + ": expected a number from " + std::to_string(min) + " to " +
        std::to_string(max) + ", got \"" + Printable(value) + "\"");
  }
  return *n;
}

// ssh's time format for ServerAliveInterval/ConnectTimeout: a bare number
// is seconds; "30s", "1m" also work.
StatusOr<Duration> ParseSshTime(const std::string& key,
                                const std::string& value) {
  std::string v = ToLower(value);
  if (v == "none") return Duration::zero();
  StatusOr<Duration> d = ParseDuration(v);
  if (!d.ok()) return d.status().WithContext(key);
  return *d;
}

bool IsReadableFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         ::access(path.c_str(), R_OK) == 0;
}

// ssh refuses a private key that group or others may access ("UNPROTECTED
// PRIVATE KEY FILE!"). k8s-agent warns and still uses it: a Kubernetes
// Secret volume is 0644 unless defaultMode says otherwise, the pod is the
// only reader of that tmpfs, and refusing would break the common setup.
void WarnIfUnprotected(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || st.st_uid != ::getuid() ||
      (st.st_mode & 077) == 0) {
    return;
  }
  char mode[8];
  std::snprintf(mode, sizeof(mode), "%04o", st.st_mode & 07777);
  LogWarning("UNPROTECTED PRIVATE KEY FILE: permissions " + std::string(mode) +
             " for " + path +
             " are too open (ssh would ignore this key; k8s-agent uses it). "
             "Make it readable by its owner only (chmod 600, or "
             "defaultMode: 0400 on the Secret volume)");
}

// "~/x" and "%d/x" are the home directory, as in ssh_config.
std::string ExpandPath(const std::string& path, const std::string& home) {
  if (path == "~") return home;
  if (StartsWith(path, "~/")) return home + path.substr(1);
  if (StartsWith(path, "%d/")) return home + path.substr(2);
  return path;
}

// A Host line matches when some pattern matches and no negated one does.
// Case-insensitive: ssh lowercases the host name before matching.
bool HostLineMatches(const std::vector<std::string>& patterns,
                     const std::string& host) {
  const std::string lower_host = ToLower(host);
  bool matched = false;
  for (const std::string& word : patterns) {
    for (const std::string& pattern : Split(ToLower(word), ',')) {
      if (pattern.empty()) continue;
      if (pattern[0] == '!') {
        if (MatchPattern(lower_host, std::string_view(pattern).substr(1))) {
          return false;
        }
      } else if (MatchPattern(lower_host, pattern)) {
        matched = true;
      }
    }
  }
  return matched;
}

AlgorithmKind AlgorithmKindOf(const std::string& lower_key) {
  if (lower_key == "ciphers") return AlgorithmKind::kCipher;
  if (lower_key == "macs") return AlgorithmKind::kMac;
  if (lower_key == "hostkeyalgorithms") return AlgorithmKind::kHostKey;
  return AlgorithmKind::kKex;
}

// The SshOptions field holding an algorithm list key, or nullptr.
std::optional<std::string>* AlgorithmField(const std::string& lower_key,
                                           SshOptions* options) {
  if (lower_key == "ciphers") return &options->ciphers;
  if (lower_key == "kexalgorithms") return &options->kex_algorithms;
  if (lower_key == "macs") return &options->macs;
  if (lower_key == "hostkeyalgorithms") return &options->host_key_algorithms;
  return nullptr;
}

// Trimmed, and without the double quotes around the whole value, if any.
std::string Unquoted(const std::string& raw_value) {
  std::string value(Trim(raw_value));
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
    value = value.substr(1, value.size() - 2);
  }
  return value;
}

StatusOr<StrictHostKeyChecking> ParseStrictHostKeyChecking(
    const std::string& value) {
  std::string v = ToLower(value);
  if (v == "yes" || v == "true" || v == "ask") {
    return StrictHostKeyChecking::kYes;  // Nobody to ask: treat as yes.
  }
  if (v == "accept-new") return StrictHostKeyChecking::kAcceptNew;
  if (v == "no" || v == "off" || v == "false") {
    return StrictHostKeyChecking::kNo;
  }
  return InvalidArgumentError(
      "StrictHostKeyChecking: expected yes, accept-new, no or ask, got \"" +
      Printable(value) + "\"");
}

// UserKnownHostsFile / GlobalKnownHostsFile: a list of files; "none" is
// /dev/null, so that nothing is read (or written) there.
StatusOr<std::vector<std::string>> ParseKnownHostsFiles(
    const std::string& raw_key, const std::string& value) {
  std::vector<std::string> files = SplitConfigWords(value);
  if (files.empty()) return InvalidArgumentError(raw_key + ": empty value");
  for (std::string& f : files) {
    if (ToLower(f) == "none") f = "/dev/null";
  }
  return files;
}

StatusOr<std::string> ParseCanonicalizeHostname(const std::string& value) {
  std::string v = ToLower(value);
  if (v != "yes" && v != "no" && v != "always" && v != "none") {
    return InvalidArgumentError(
        "CanonicalizeHostname: expected yes, no, always or none, got \"" +
        Printable(value) + "\"");
  }
  return v;
}

// In whole seconds, bounded so that the count fits an int.
StatusOr<int> ParseServerAliveInterval(const std::string& value) {
  K8S_ASSIGN_OR_RETURN(Duration d, ParseSshTime("ServerAliveInterval", value));
  auto s = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (s > 86400 * 365) {
    return InvalidArgumentError("ServerAliveInterval: too large");
  }
  return static_cast<int>(s);
}

StatusOr<std::string> ParseLogLevel(const std::string& value) {
  std::string v = ToLower(value);
  static const char* const kLevels[] = {"quiet",  "fatal",   "error",
                                        "info",   "verbose", "debug",
                                        "debug1", "debug2",  "debug3"};
  bool ok = false;
  for (const char* level : kLevels) ok = ok || v == level;
  if (!ok) {
    return InvalidArgumentError("LogLevel: unknown level \"" +
                                Printable(value) + "\"");
  }
  return v;
}

// The login name: User, else the passwd entry of the process's uid, else
// kNoPasswdEntryUser. A container run with a uid its image does not list
// (OpenShift's restricted-v2 picks one from the namespace's range) has no
// entry; ssh refuses there ("No user exists for uid N"), which leaves such
// a job nothing to run. "default" is what k8s-agent-sshd names that uid on
// the worker (OpenShift images' own convention), so the two meet without
// configuration. Never $USER: the environment is the job's, and a USER=root
// there must not turn into a root login.
StatusOr<std::string> UserName(const SshOptions& options, UserLookup lookup) {
  if (options.user) return *options.user;
  if (std::optional<std::string> name = lookup(::getuid())) return *name;
  return std::string(kNoPasswdEntryUser);
}

// The IdentityFile keys that can be read (the others are said and
// skipped), else ssh's default keys that exist.
StatusOr<std::vector<std::string>> IdentityFiles(const SshOptions& options,
                                                 const FileTokens& tokens) {
  std::vector<std::string> files;
  if (!options.identity_files.empty()) {
    for (const std::string& f : options.identity_files) {
      K8S_ASSIGN_OR_RETURN(std::string path,
                           ExpandFileTokens("IdentityFile", f, tokens));
      if (IsReadableFile(path)) {
        WarnIfUnprotected(path);
        files.push_back(path);
      } else {
        LogWarning("identity file " + path + " not accessible; skipped");
      }
    }
    return files;
  }
  for (const char* name : {"id_ed25519", "id_ecdsa", "id_rsa"}) {
    std::string path = tokens.home + "/.ssh/" + name;
    if (IsReadableFile(path)) {
      WarnIfUnprotected(path);
      files.push_back(path);
    }
  }
  return files;
}

// The user's known_hosts files, then the system-wide ones: those are read
// too (never written), as ssh does. ssh expands tokens in the user's only.
StatusOr<std::vector<std::string>> KnownHostsFiles(const SshOptions& options,
                                                   const FileTokens& tokens) {
  std::vector<std::string> files;
  if (options.user_known_hosts_files.empty()) {
    files.push_back(tokens.home + "/.ssh/known_hosts");
  } else {
    for (const std::string& f : options.user_known_hosts_files) {
      K8S_ASSIGN_OR_RETURN(std::string path,
                           ExpandFileTokens("UserKnownHostsFile", f, tokens));
      files.push_back(path);
    }
  }
  if (options.global_known_hosts_files.empty()) {
    files.push_back("/etc/ssh/ssh_known_hosts");
  }
  for (const std::string& f : options.global_known_hosts_files) {
    files.push_back(ExpandPath(f, tokens.home));
  }
  return files;
}

// What the tokens of IdentityFile and UserKnownHostsFile stand for.
FileTokens TokensFor(const SshOptions& options, const std::string& host,
                     const ResolvedSshOptions& r, const std::string& home,
                     UserLookup lookup) {
  FileTokens t;
  t.home = home;
  t.host = r.hostname;
  t.host_arg = host;
  t.key_alias = options.host_key_alias.value_or(host);
  t.user = r.user;
  t.local_user = lookup(::getuid()).value_or("");
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) == 0) t.local_host = name;
  t.uid = ::getuid();
  t.port = r.port;
  t.getenv = [](const std::string& var) -> std::optional<std::string> {
    const char* v = std::getenv(var.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
  return t;
}

// Each algorithm list spec applied to the defaults of its kind.
Status ResolveAlgorithms(const SshOptions& options, AlgorithmPrefs* prefs) {
  struct {
    const std::optional<std::string>& spec;
    AlgorithmKind kind;
    std::vector<std::string>* out;
  } const lists[] = {
      {options.kex_algorithms, AlgorithmKind::kKex, &prefs->kex},
      {options.ciphers, AlgorithmKind::kCipher, &prefs->ciphers},
      {options.macs, AlgorithmKind::kMac, &prefs->macs},
      {options.host_key_algorithms, AlgorithmKind::kHostKey, &prefs->host_keys},
  };
  for (const auto& l : lists) {
    if (!l.spec) continue;
    K8S_ASSIGN_OR_RETURN(*l.out, ApplyAlgorithmSpec(l.kind, *l.spec));
  }
  return OkStatus();
}

}  // namespace

std::vector<std::string> SplitConfigWords(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    if (i >= s.size() || s[i] == '#') break;
    std::string word;
    if (s[i] == '"') {
      size_t end = s.find('"', i + 1);
      if (end == std::string_view::npos) end = s.size();
      word = std::string(s.substr(i + 1, end - i - 1));
      i = end + 1;
    } else {
      size_t end = s.find_first_of(" \t", i);
      if (end == std::string_view::npos) end = s.size();
      word = std::string(s.substr(i, end - i));
      i = end;
    }
    out.push_back(std::move(word));
  }
  return out;
}

bool HostPatternMatches(const std::string& pattern_list,
                        const std::string& host) {
  return HostLineMatches(SplitConfigWords(pattern_list), host);
}

void SshOptions::MergeFrom(const SshOptions& lower) {
  if (!user) user = lower.user;
  if (!port) port = lower.port;
  identity_files.insert(identity_files.end(), lower.identity_files.begin(),
                        lower.identity_files.end());
  if (!strict_host_key_checking) {
    strict_host_key_checking = lower.strict_host_key_checking;
  }
  if (user_known_hosts_files.empty()) {
    user_known_hosts_files = lower.user_known_hosts_files;
  }
  if (!connect_timeout) connect_timeout = lower.connect_timeout;
  if (!server_alive_interval_s) {
    server_alive_interval_s = lower.server_alive_interval_s;
  }
  if (!server_alive_count_max) {
    server_alive_count_max = lower.server_alive_count_max;
  }
  if (!connection_attempts) connection_attempts = lower.connection_attempts;
  if (!batch_mode) batch_mode = lower.batch_mode;
  if (!log_level) log_level = lower.log_level;
  no_stdin = no_stdin || lower.no_stdin;
  if (!ciphers) ciphers = lower.ciphers;
  if (!kex_algorithms) kex_algorithms = lower.kex_algorithms;
  if (!macs) macs = lower.macs;
  if (!host_key_algorithms) host_key_algorithms = lower.host_key_algorithms;
  if (!hostname) hostname = lower.hostname;
  if (!host_key_alias) host_key_alias = lower.host_key_alias;
  if (global_known_hosts_files.empty()) {
    global_known_hosts_files = lower.global_known_hosts_files;
  }
  if (!bind_address) bind_address = lower.bind_address;
  if (!canonicalize_hostname) {
    canonicalize_hostname = lower.canonicalize_hostname;
  }
  if (!ignore_unknown) ignore_unknown = lower.ignore_unknown;
}

Status ApplySshOption(const std::string& raw_key, const std::string& raw_value,
                      SshOptions* options, bool* known) {
  std::string key = ToLower(Trim(raw_key));
  std::string value = Unquoted(raw_value);
  if (known != nullptr) *known = true;
  // Values are validated even when an earlier source already set the key,
  // so a typo is reported wherever it is; the first value wins, as in ssh.
  if (key == "port") {
    K8S_ASSIGN_OR_RETURN(int port, ParseBoundedInt("Port", value, 1, 65535));
    if (!options->port) options->port = port;
  } else if (key == "user") {
    if (value.empty()) return InvalidArgumentError("User: empty value");
    if (!options->user) options->user = value;
  } else if (key == "identityfile") {
    if (value.empty()) return InvalidArgumentError("IdentityFile: empty value");
    options->identity_files.push_back(value);
  } else if (key == "stricthostkeychecking") {
    K8S_ASSIGN_OR_RETURN(StrictHostKeyChecking mode,
                         ParseStrictHostKeyChecking(value));
    if (!options->strict_host_key_checking) {
      options->strict_host_key_checking = mode;
    }
  } else if (key == "userknownhostsfile" || key == "globalknownhostsfile") {
    K8S_ASSIGN_OR_RETURN(std::vector<std::string> files,
                         ParseKnownHostsFiles(raw_key, value));
    std::vector<std::string>* field = key == "userknownhostsfile"
                                          ? &options->user_known_hosts_files
                                          : &options->global_known_hosts_files;
    if (field->empty()) *field = std::move(files);
  } else if (key == "hostname" || key == "hostkeyalias" ||
             key == "bindaddress" || key == "ignoreunknown") {
    if (value.empty()) return InvalidArgumentError(raw_key + ": empty value");
    std::optional<std::string>* field =
        key == "hostname"       ? &options->hostname
        : key == "hostkeyalias" ? &options->host_key_alias
        : key == "bindaddress"  ? &options->bind_address
                                : &options->ignore_unknown;
    if (!*field) *field = value;
  } else if (key == "stdinnull") {
    K8S_ASSIGN_OR_RETURN(bool b, ParseYesNo("StdinNull", value));
    options->no_stdin = options->no_stdin || b;
  } else if (key == "canonicalizehostname") {
    K8S_ASSIGN_OR_RETURN(std::string v, ParseCanonicalizeHostname(value));
    if (!options->canonicalize_hostname) options->canonicalize_hostname = v;
  } else if (key == "connecttimeout") {
    K8S_ASSIGN_OR_RETURN(Duration d, ParseSshTime("ConnectTimeout", value));
    if (!options->connect_timeout) options->connect_timeout = d;
  } else if (key == "serveraliveinterval") {
    K8S_ASSIGN_OR_RETURN(int s, ParseServerAliveInterval(value));
    if (!options->server_alive_interval_s) {
      options->server_alive_interval_s = s;
    }
  } else if (key == "serveralivecountmax") {
    K8S_ASSIGN_OR_RETURN(
        int n, ParseBoundedInt("ServerAliveCountMax", value, 0, 1000000));
    if (!options->server_alive_count_max) options->server_alive_count_max = n;
  } else if (key == "connectionattempts") {
    K8S_ASSIGN_OR_RETURN(
        int n, ParseBoundedInt("ConnectionAttempts", value, 1, 1000000));
    if (!options->connection_attempts) options->connection_attempts = n;
  } else if (key == "batchmode") {
    K8S_ASSIGN_OR_RETURN(bool b, ParseYesNo("BatchMode", value));
    if (!options->batch_mode) options->batch_mode = b;
  } else if (key == "loglevel") {
    K8S_ASSIGN_OR_RETURN(std::string v, ParseLogLevel(value));
    if (!options->log_level) options->log_level = v;
  } else if (std::optional<std::string>* spec = AlgorithmField(key, options)) {
    K8S_RETURN_IF_ERROR(
        ApplyAlgorithmSpec(AlgorithmKindOf(key), value).status());
    if (!*spec) *spec = value;
  } else {
    if (known != nullptr) *known = false;
  }
  return OkStatus();
}

Status ApplySshSetting(const std::string& key, const std::string& value,
                       SshOptions* options, std::string* note) {
  note->clear();
  bool known = true;
  K8S_RETURN_IF_ERROR(ApplySshOption(key, value, options, &known));
  if (known) return OkStatus();
  const SshKeyword* keyword = FindSshKeyword(key);
  if (keyword == nullptr) {
    if (options->ignore_unknown &&
        HostPatternMatches(*options->ignore_unknown, key)) {
      *note = "ignoring " + key + " (IgnoreUnknown)";
      return OkStatus();
    }
    return InvalidArgumentError(
        "Bad configuration option: " + Printable(key) +
        " (ssh would refuse it too; list it in IgnoreUnknown to skip it)");
  }
  if (keyword->use == KeywordUse::kHonoured) {
    // Host, Match and Include: the config reader takes them first.
    return InvalidArgumentError(std::string(keyword->name) +
                                " only works in an ssh_config file");
  }
  return CheckUnappliedKeyword(*keyword, value, note);
}

StatusOr<std::string> ExpandHostName(const std::string& hostname,
                                     const std::string& host) {
  // ssh expands only %h (and %%) in HostName.
  std::string out;
  for (size_t i = 0; i < hostname.size(); ++i) {
    if (hostname[i] != '%' || i + 1 == hostname.size()) {
      out += hostname[i];
    } else if (hostname[++i] == 'h') {
      out += host;
    } else if (hostname[i] == '%') {
      out += '%';
    } else {
      return InvalidArgumentError("HostName " + Printable(hostname) +
                                  ": unknown token %" + hostname[i] +
                                  " (only %h and %% expand there)");
    }
  }
  return out;
}

std::optional<std::string> PasswdUserName(unsigned uid) {
  struct passwd* pw = ::getpwuid(static_cast<uid_t>(uid));
  if (pw == nullptr || pw->pw_name == nullptr || pw->pw_name[0] == '\0') {
    return std::nullopt;
  }
  return std::string(pw->pw_name);
}

StatusOr<ResolvedSshOptions> Resolve(const SshOptions& options,
                                     const std::string& host,
                                     UserLookup lookup) {
  ResolvedSshOptions r;
  r.hostname = host;
  if (options.hostname) {
    K8S_ASSIGN_OR_RETURN(r.hostname, ExpandHostName(*options.hostname, host));
  }
  r.host_key_alias = options.host_key_alias.value_or(r.hostname);
  r.bind_address = options.bind_address.value_or("");
  const char* home_env = std::getenv("HOME");
  std::string home = HomeDir(home_env != nullptr ? home_env : "");
  K8S_ASSIGN_OR_RETURN(r.user, UserName(options, lookup));
  if (options.port) r.port = *options.port;
  const FileTokens tokens = TokensFor(options, host, r, home, lookup);
  K8S_ASSIGN_OR_RETURN(r.identity_files, IdentityFiles(options, tokens));
  if (options.strict_host_key_checking) {
    r.strict_host_key_checking = *options.strict_host_key_checking;
  }
  K8S_ASSIGN_OR_RETURN(r.known_hosts_files, KnownHostsFiles(options, tokens));

  if (options.connect_timeout) {
    // ConnectTimeout=0/none means "no timeout" in ssh; a day is plenty.
    r.connect_timeout = *options.connect_timeout > Duration::zero()
                            ? *options.connect_timeout
                            : std::chrono::hours(24);
  }
  if (options.server_alive_interval_s) {
    r.server_alive_interval_s = *options.server_alive_interval_s;
  }
  if (options.server_alive_count_max) {
    r.server_alive_count_max = *options.server_alive_count_max;
  }
  r.no_stdin = options.no_stdin;
  K8S_RETURN_IF_ERROR(ResolveAlgorithms(options, &r.algorithms));
  return r;
}

}  // namespace k8s_agent::ssh
