// SPDX-License-Identifier: Apache-2.0
// A namespace's pods as one agent listed them, shared for a bounded time
// with the other agents of the same user, server and credential.

#ifndef K8S_AGENT_PLUGIN_KUBE_POD_LIST_CACHE_H_
#define K8S_AGENT_PLUGIN_KUBE_POD_LIST_CACHE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plugin/base/clock.h"
#include "plugin/base/status.h"
#include "plugin/base/unique_fd.h"

namespace k8s_agent::kube {

/// At most this many pods are kept from one list; a larger namespace is not
/// shared (each agent looks its pod up itself), so the directory stays
/// bounded whatever the namespace holds.
inline constexpr size_t kMaxSharedPods = 5000;
/// A pod object larger than this is not kept (a real one is a few KiB).
inline constexpr size_t kMaxSharedPodBytes = 256u << 10;

/// DIR/KEY/ holds one file per listed pod, `pod.NAME`, its object as the API
/// server wrote it after a line naming the list (the fill) it came from,
/// and `fill`, the stamp of the latest list: its id, when it was read and
/// its resourceVersion. The stamp is replaced by rename(2) after every pod
/// file of its list is in place, so a reader that finds a pod file of the
/// stamp's fill sees what that list said. Readers never lock; the agent
/// that lists is chosen by flock(DIR/KEY/lock), only ever tried with
/// LOCK_NB (the caller looks again on a timer, as CredentialCache's does).
///
/// What it holds is what the credential could list and nothing of the
/// credential itself; the directory is the user's own (0700, EnsurePrivateDir),
/// the files 0600, and every file read must be a regular file of this euid
/// that nobody else can read. KEY covers the server, the namespace and the
/// credential's identity, so an agent with another credential never reads
/// what this one could list.
/// Where the shared lists go: `cache_dir`/pods (the user's cache, beside
/// the exec credentials'), or, when that cannot be made a private
/// directory of ours (a read-only root leaves HOME unwritable in a
/// locked-down pod, whose /tmp is an emptyDir), `tmp_dir`/k8s-agent-EUID-pods,
/// itself made 0700 and checked to be ours: one another user made first is
/// refused, and a sticky /tmp keeps others from swapping it. "" when neither
/// is private: every lookup then goes to the API server.
std::string SharedPodListDir(const std::string& cache_dir,
                             const std::string& tmp_dir);

class PodListCache {
 public:
  using WallClock = std::function<int64_t()>;  ///< Unix milliseconds.

  /// `dir` "" = no sharing; `max_age` bounds how old a list may be used.
  PodListCache(std::string dir, std::string key, Duration max_age,
               WallClock now);

  /// False when there is no directory or it is not a private one of ours
  /// (logged once at -v): every lookup then goes to the API server.
  bool shared();

  enum class Latest {
    kNone,        ///< No list younger than max_age: one may be made.
    kListed,      ///< A complete list younger than max_age.
    kUnlistable,  ///< A list failed or was too large within max_age:
                  ///< nobody lists again until it ages out.
  };
  Latest latest() const;

  /// The pod `name` as the latest complete list showed it.
  struct Entry {
    std::string object;  ///< The pod's JSON object.
    std::string rv;      ///< The list's resourceVersion (to watch from).
    Duration age{};      ///< How long ago the list was read.
  };
  std::optional<Entry> Find(const std::string& name) const;

  enum class Lock {
    kHeld,      ///< Ours until Release(): list, then Store.
    kBusy,      ///< Another agent lists: look again later.
    kUnshared,  ///< No lock file: look up unshared.
  };
  /// One flock(LOCK_EX | LOCK_NB) attempt; never waits.
  Lock TryLock();
  /// With the lock held: the list's pods (name, object) and version. Pods
  /// beyond the bounds are left out; files of pods it no longer has go.
  Status Store(const std::vector<std::pair<std::string, std::string>>& pods,
               const std::string& rv);
  /// With the lock held: the list failed or was too large (`why`, for -v);
  /// other agents look up unshared until max_age has passed.
  Status StoreUnlistable(const std::string& why);
  void Release();

  /// DIR/KEY, for messages and tests.
  const std::string& dir() const { return dir_; }

 private:
  struct Stamp {
    std::string id;
    int64_t at_ms = 0;
    std::string rv;
    bool complete = false;
  };
  std::optional<Stamp> ReadStamp() const;
  std::optional<std::string> ReadPrivate(const std::string& name) const;
  Status WriteStamp(bool complete, const std::string& rv);
  void RemoveOtherPods(const std::vector<std::string>& kept);

  std::string dir_;
  Duration max_age_;
  WallClock now_;
  int private_dir_ = -1;  // -1 unknown, 0 no, 1 yes.
  UniqueFd dir_fd_;
  UniqueFd lock_fd_;
  bool locked_ = false;
  std::string fill_id_;  // The id Store gives the list it writes.
};

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_POD_LIST_CACHE_H_
