// SPDX-License-Identifier: Apache-2.0
// Exec plugin credentials shared by the agents of one job, so that N agents
// started at once run the plugin once, not N times.

#ifndef K8S_AGENT_PLUGIN_KUBE_CREDENTIAL_CACHE_H_
#define K8S_AGENT_PLUGIN_KUBE_CREDENTIAL_CACHE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "plugin/base/status.h"
#include "plugin/base/unique_fd.h"
#include "plugin/kube/exec_credential.h"

namespace k8s_agent::kube {

/// A credential is used until this long before its expirationTimestamp.
/// Why 30 s: it covers clock skew between the plugin's issuer and this
/// host and one request's time in flight, and against EKS's 14-minute
/// tokens (the shortest common lifetime) it costs a refresh only 4% early.
constexpr int64_t kCredentialMarginSeconds = 30;

/// The per-user cache directory for `env` lookups: $XDG_CACHE_HOME/k8s-agent,
/// else $HOME/.kube/cache/k8s-agent, else "" (no cache).
std::string CredentialCacheDir(const std::string& xdg_cache_home,
                               const std::string& home);

/// One credential in DIR/KEY.json. Readers never lock: the file is replaced
/// by rename(2), so they see the old one or the new one. Who runs the
/// plugin is decided by flock(DIR/KEY.lock), taken only with LOCK_NB: the
/// caller retries on a loop timer (ExecCredentialSource), re-reading the file
/// in between, so waiting for another agent never blocks the loop. Only
/// credentials with an expiration are written (kubectl keeps the others in
/// memory only); the directory is 0700 and owned by the user, the files
/// 0600.
class CredentialCache {
 public:
  using WallClock = std::function<int64_t()>;  ///< Unix seconds.

  /// `dir` "" = no sharing.
  CredentialCache(std::string dir, std::string key, WallClock now);

  /// The hex key (SHA-256) of everything that decides which identity the
  /// plugin answers for: the exec stanza (command, args, env, apiVersion,
  /// provideClusterInfo), the server, and `plugin_env`, the whole
  /// environment the plugin is given (sorted; without `_` and SHLVL, which
  /// a shell sets per command). client-go runs the plugin
  /// per process with that process's environment; AWS_PROFILE,
  /// KUBECONFIG-adjacent variables or a plugin's own settings may pick
  /// another identity, and nobody can list which ones a plugin reads.
  static std::string Key(const ExecConfig& exec, const std::string& server,
                         std::vector<std::string> plugin_env);

  /// False when there is no directory, or it is not a private one of ours
  /// (logged once): the plugin then runs unshared.
  bool shared();

  /// The cached credential when valid beyond the margin and not holding
  /// `stale` (a token just refused with 401); kNotFound otherwise.
  StatusOr<ExecCredential> ReadFresh(const std::string& stale) const;

  enum class Lock {
    kHeld,      ///< Ours until Release(): run the plugin.
    kBusy,      ///< Another process runs it: look again later.
    kUnshared,  ///< No lock file: run the plugin unshared.
  };
  /// One flock(LOCK_EX | LOCK_NB) attempt; never waits.
  Lock TryLock();
  /// Writes `cred` (if it expires; else removes any old file, which must
  /// not outlive this answer), when the lock is held.
  void Store(const ExecCredential& cred);
  void Release();

  /// Valid for more than the margin, and not `stale`.
  bool Fresh(const ExecCredential& cred, const std::string& stale) const;

  /// The cache file (tests).
  std::string file() const { return file_; }
  /// The lock file (tests).
  std::string lock_file() const { return lock_; }

 private:
  std::string dir_, file_, lock_;
  WallClock now_;
  int private_dir_ = -1;  // -1 unknown, 0 no, 1 yes.
  UniqueFd lock_fd_;
  bool locked_ = false;
};

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_CREDENTIAL_CACHE_H_
