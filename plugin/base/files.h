// SPDX-License-Identifier: Apache-2.0
// Writing files so that a reader never sees half of one: the delivery
// copier (images/deliver) and the worker's sshd entry (plugin/sshd) install
// what other processes start from.
#ifndef K8S_AGENT_PLUGIN_BASE_FILES_H_
#define K8S_AGENT_PLUGIN_BASE_FILES_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/base/status.h"
#include "plugin/base/unique_fd.h"

namespace k8s_agent {

/// Who a written file belongs to; unset keeps the writer's own ids.
struct FileOwner {
  uid_t uid = 0;
  gid_t gid = 0;
};

/// Writes `content` to `path` through a temporary file beside it, given
/// `mode` (not masked by the umask) and `owner`, renamed into place. The
/// temporary's name is random and it is created O_EXCL|O_NOFOLLOW, so a
/// file or symlink planted in the directory is never written through; one
/// at `path` itself is replaced, not followed.
Status WriteFileAtomically(const std::string& path, std::string_view content,
                           mode_t mode,
                           std::optional<FileOwner> owner = std::nullopt);

/// The same as `name` in the directory `dirfd` (`dir` names it in
/// messages): what is written lands in the directory that was opened, even
/// if its path is swapped meanwhile.
Status WriteFileAtomicallyAt(int dirfd, const std::string& dir,
                             const std::string& name, std::string_view content,
                             mode_t mode,
                             std::optional<FileOwner> owner = std::nullopt);

/// Opens the directory `path` for the *At calls, refusing a symlink in its
/// place (O_NOFOLLOW) or anything but a directory.
StatusOr<UniqueFd> OpenDirNoFollow(const std::string& path);

/// Opens the directory `name` in `dirfd` the same way.
StatusOr<UniqueFd> OpenDirNoFollowAt(int dirfd, const std::string& dir,
                                     const std::string& name);

/// Removes `name` in `dirfd` and, when it is a directory, all it holds,
/// following no symlink: what another user left there goes, and nothing
/// outside it, however deep it is (deep parts are moved up into `dirfd`
/// under a ".deep." name and removed from there). A missing `name` is fine.
Status RemoveTreeAt(int dirfd, const std::string& dir, const std::string& name);

/// The names in the directory `dirfd` (`dir` names it in messages), but
/// "." and "..".
StatusOr<std::vector<std::string>> ListDirAt(int dirfd, const std::string& dir);

/// mkdir -p `dir` (absolute) with 0700 for what it creates. True when its
/// last component then is a directory of this euid, not a symlink, that
/// nobody else can write (a wider mode is narrowed to 0700): a cache other
/// agents of the user read must be one another user cannot plant in.
bool EnsurePrivateDir(const std::string& dir);

/// Copies `src` to `dst` the same way (streamed: any size).
Status CopyFileAtomically(const std::string& src, const std::string& dst,
                          mode_t mode);

/// The same, unless `dst` already is that copy: a regular file (not a
/// symlink) of this uid with no other hard link and the same size and bytes
/// as `src`; then nothing is written but `mode`, if it differs (a directory
/// that only just held the first copy has no room for a second). True when
/// it wrote a copy.
StatusOr<bool> CopyFileIfChanged(const std::string& src, const std::string& dst,
                                 mode_t mode);

/// The directory of the running program (/proc/self/exe), symlinks
/// resolved: what is delivered sits beside it.
StatusOr<std::string> SelfExeDir();

/// "dir/name", without doubling the slash of "/".
std::string JoinPath(const std::string& dir, const std::string& name);

/// What a file that is not a regular one is ("a FIFO (named pipe)", "a
/// directory", ...), for the message that refuses it.
const char* FileTypeName(mode_t mode);

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_BASE_FILES_H_
