// SPDX-License-Identifier: Apache-2.0
// Exec plugin credentials shared by the agents of one job, so that N agents
// started at once run the plugin once, not N times.

#ifndef K8S_AGENT_PLUGIN_KUBE_CREDENTIAL_CACHE_H_
#define K8S_AGENT_PLUGIN_KUBE_CREDENTIAL_CACHE_H_

#include <cstdint>
#include <functional>
#include <string>

#include "plugin/base/status.h"
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

/// One credential in DIR/KEY.json, guarded by flock(DIR/KEY.lock): the
/// process holding the lock runs the plugin; the others wait for it and
/// read what it wrote. Only credentials with an expiration are written
/// (kubectl keeps the others in memory only); the directory is 0700 and
/// owned by the user, the files 0600.
class CredentialCache {
 public:
  using Runner = std::function<StatusOr<ExecCredential>()>;
  using WallClock = std::function<int64_t()>;  ///< Unix seconds.

  /// `dir` "" = no sharing: Get() runs the plugin every time it is called.
  CredentialCache(std::string dir, std::string key, WallClock now);

  /// A credential valid for more than the margin: the cached one, else a
  /// fresh one from `run`. `stale_token`, when set, was refused with 401:
  /// a cached credential holding it is not reused.
  StatusOr<ExecCredential> Get(const Runner& run,
                               const std::string& stale_token = "");

  /// The cache file (tests).
  std::string file() const { return file_; }

 private:
  bool Fresh(const ExecCredential& cred, const std::string& stale) const;
  StatusOr<ExecCredential> RunAndStore(const Runner& run);

  std::string dir_, file_, lock_;
  WallClock now_;
};

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_CREDENTIAL_CACHE_H_
