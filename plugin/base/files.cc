// SPDX-License-Identifier: Apache-2.0
#include "plugin/base/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

namespace k8s_agent {
namespace {

Status WriteAll(int fd, const char* data, size_t size,
                const std::string& path) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("write " + path, errno);
    data += n;
    size -= static_cast<size_t>(n);
  }
  return OkStatus();
}

constexpr int kTempAttempts = 100;
constexpr int kMaxTreeDepth = 64;
constexpr int kMaxTreeMoves = 1 << 16;

// A random suffix for a temporary's name: the writer's pid is predictable,
// and a name another user can guess is one they can plant a symlink at.
std::string RandomSuffix() {
  std::array<unsigned char, 8> bytes{};
  size_t got = 0;
  while (got < bytes.size()) {
    ssize_t n = getrandom(bytes.data() + got, bytes.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;  // Only O_EXCL then keeps it safe; retries vary it.
    got += static_cast<size_t>(n);
  }
  static unsigned counter = 0;
  std::string out;
  static constexpr char kHex[] = "0123456789abcdef";
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out + std::to_string(counter++);
}

// A temporary file in `dirfd` beside `name` (so rename stays on one file
// system): a fresh name each try, created only if nothing is there, and
// never through a symlink.
struct Temp {
  UniqueFd fd;
  std::string name;
};

StatusOr<Temp> CreateTemp(int dirfd, const std::string& dir,
                          const std::string& name) {
  for (int i = 0; i < kTempAttempts; ++i) {
    Temp t;
    t.name = "." + name + ".tmp." + RandomSuffix();
    t.fd.reset(openat(dirfd, t.name.c_str(),
                      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                      0600));
    if (t.fd.valid()) return t;
    if (errno != EEXIST) {
      return ErrnoError("create " + JoinPath(dir, t.name), errno);
    }
  }
  return FailedPreconditionError(
      "create a temporary file for " + JoinPath(dir, name) + ": " +
      std::to_string(kTempAttempts) + " random names all taken");
}

// Gives the temporary its mode and owner, closes it and renames it to
// `name`; removes it on any failure, including `status`'s.
Status Finish(Status status, int dirfd, const std::string& dir, Temp t,
              const std::string& name, mode_t mode,
              std::optional<FileOwner> owner) {
  std::string tmp = JoinPath(dir, t.name);
  // fchmod, not the open mode: the umask must not take bits away.
  if (status.ok() && fchmod(t.fd.get(), mode) != 0) {
    status = ErrnoError("chmod " + tmp, errno);
  }
  if (status.ok() && owner && fchown(t.fd.get(), owner->uid, owner->gid) != 0) {
    status = ErrnoError("chown " + tmp, errno);
  }
  if (status.ok() && close(t.fd.release()) != 0) {
    status = ErrnoError("close " + tmp, errno);
  }
  if (status.ok() &&
      renameat(dirfd, t.name.c_str(), dirfd, name.c_str()) != 0) {
    status = ErrnoError("rename " + tmp + " to " + JoinPath(dir, name), errno);
  }
  if (!status.ok()) unlinkat(dirfd, t.name.c_str(), 0);
  return status;
}

// "dir/name" split for the *At calls: the directory ("." for none) and the
// last component.
std::pair<std::string, std::string> SplitPath(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

// The directory a path-based write goes to: the caller named it, so
// symlinks on the way are the caller's; only the file's own name is guarded.
StatusOr<UniqueFd> OpenParent(const std::string& dir) {
  UniqueFd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoError("open directory " + dir, errno);
  return fd;
}

// Where RemoveTreeAt is: the directory it was called on, and the
// subdirectories moved up to it from too deep down.
struct RemoveTop {
  int fd;
  const std::string& dir;
  std::vector<std::string> moved;
};

// Removing a tree another user made: past kMaxTreeDepth (a bound on open
// descriptors and the stack), the subdirectory is renamed up into the top
// directory and removed from there later, so that no depth they can make
// stops the removal.
Status MoveUp(RemoveTop& top, int dirfd, const std::string& path,
              const std::string& name) {
  for (int i = 0; i < kTempAttempts; ++i) {
    std::string up = ".deep." + RandomSuffix();
    if (renameat(dirfd, name.c_str(), top.fd, up.c_str()) == 0) {
      top.moved.push_back(up);
      return OkStatus();
    }
    if (errno != EEXIST && errno != ENOTEMPTY) {
      return ErrnoError("move " + path + " up to " + top.dir, errno);
    }
  }
  return FailedPreconditionError("move " + path + " up to " + top.dir +
                                 ": random names all taken");
}

Status RemoveTreeAtDepth(RemoveTop& top, int dirfd, const std::string& dir,
                         const std::string& name, int depth) {
  std::string path = JoinPath(dir, name);
  if (unlinkat(dirfd, name.c_str(), 0) == 0 || errno == ENOENT) {
    return OkStatus();
  }
  if (errno != EISDIR && errno != EPERM) {
    return ErrnoError("remove " + path, errno);
  }
  if (depth >= kMaxTreeDepth) return MoveUp(top, dirfd, path, name);
  K8S_ASSIGN_OR_RETURN(UniqueFd sub, OpenDirNoFollowAt(dirfd, dir, name));
  K8S_ASSIGN_OR_RETURN(std::vector<std::string> names,
                       ListDirAt(sub.get(), path));
  for (const std::string& n : names) {
    K8S_RETURN_IF_ERROR(RemoveTreeAtDepth(top, sub.get(), path, n, depth + 1));
  }
  if (unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    return ErrnoError("remove " + path, errno);
  }
  return OkStatus();
}

}  // namespace

Status WriteFileAtomicallyAt(int dirfd, const std::string& dir,
                             const std::string& name, std::string_view content,
                             mode_t mode, std::optional<FileOwner> owner) {
  K8S_ASSIGN_OR_RETURN(Temp t, CreateTemp(dirfd, dir, name));
  Status status = WriteAll(t.fd.get(), content.data(), content.size(),
                           JoinPath(dir, t.name));
  return Finish(status, dirfd, dir, std::move(t), name, mode, owner);
}

Status WriteFileAtomically(const std::string& path, std::string_view content,
                           mode_t mode, std::optional<FileOwner> owner) {
  auto [dir, name] = SplitPath(path);
  K8S_ASSIGN_OR_RETURN(UniqueFd dirfd, OpenParent(dir));
  return WriteFileAtomicallyAt(dirfd.get(), dir, name, content, mode, owner);
}

namespace {

// Streams `in` (from its current offset) into a temporary beside `dst`,
// renamed into place with `mode`.
Status CopyFdAtomically(int in, const std::string& src, const std::string& dst,
                        mode_t mode) {
  auto [dir, name] = SplitPath(dst);
  K8S_ASSIGN_OR_RETURN(UniqueFd dirfd, OpenParent(dir));
  K8S_ASSIGN_OR_RETURN(Temp t, CreateTemp(dirfd.get(), dir, name));
  std::array<char, 1 << 16> buf{};
  Status status;
  while (status.ok()) {
    ssize_t n = read(in, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      status = ErrnoError("read " + src, errno);
    } else if (n == 0) {
      break;
    } else {
      status = WriteAll(t.fd.get(), buf.data(), static_cast<size_t>(n),
                        JoinPath(dir, t.name));
    }
  }
  return Finish(status, dirfd.get(), dir, std::move(t), name, mode,
                std::nullopt);
}

// Reads up to `size` bytes, fewer only at the end of the file.
StatusOr<size_t> ReadFull(int fd, char* data, size_t size,
                          const std::string& path) {
  size_t got = 0;
  while (got < size) {
    ssize_t n = read(fd, data + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("read " + path, errno);
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  return got;
}

// Whether `dst` already is what copying `in` (of `in_st`) with `mode` would
// make: a regular file, not a symlink, of this uid, with no other name
// (nlink 1), the same size and bytes; a mode that differs alone is set on
// it (that needs no room). Anything that cannot be checked counts as
// different.
bool AlreadyInPlace(int in, const struct stat& in_st, const std::string& src,
                    const std::string& dst, mode_t mode) {
  UniqueFd out(
      open(dst.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (!out.valid() || fstat(out.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_uid != geteuid() || st.st_nlink != 1 ||
      st.st_size != in_st.st_size) {
    return false;
  }
  std::array<char, 1 << 16> a{};
  std::array<char, 1 << 16> b{};
  while (true) {
    StatusOr<size_t> na = ReadFull(in, a.data(), a.size(), src);
    StatusOr<size_t> nb = ReadFull(out.get(), b.data(), b.size(), dst);
    if (!na.ok() || !nb.ok() || *na != *nb) return false;
    if (*na == 0) {
      return (st.st_mode & 07777) == mode || fchmod(out.get(), mode) == 0;
    }
    if (std::memcmp(a.data(), b.data(), *na) != 0) return false;
  }
}

}  // namespace

Status CopyFileAtomically(const std::string& src, const std::string& dst,
                          mode_t mode) {
  UniqueFd in(open(src.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in.valid()) return ErrnoError("open " + src, errno);
  return CopyFdAtomically(in.get(), src, dst, mode);
}

StatusOr<bool> CopyFileIfChanged(const std::string& src, const std::string& dst,
                                 mode_t mode) {
  UniqueFd in(open(src.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in.valid()) return ErrnoError("open " + src, errno);
  struct stat in_st {};
  if (fstat(in.get(), &in_st) != 0) return ErrnoError("stat " + src, errno);
  if (AlreadyInPlace(in.get(), in_st, src, dst, mode)) return false;
  if (lseek(in.get(), 0, SEEK_SET) != 0)
    return ErrnoError("seek " + src, errno);
  K8S_RETURN_IF_ERROR(CopyFdAtomically(in.get(), src, dst, mode));
  return true;
}

StatusOr<UniqueFd> OpenDirNoFollow(const std::string& path) {
  UniqueFd fd(
      open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    return ErrnoError("open directory " + path +
                          (errno == ELOOP || errno == ENOTDIR
                               ? " (a symlink or not a directory: refused)"
                               : ""),
                      errno);
  }
  return fd;
}

StatusOr<UniqueFd> OpenDirNoFollowAt(int dirfd, const std::string& dir,
                                     const std::string& name) {
  UniqueFd fd(openat(dirfd, name.c_str(),
                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    return ErrnoError("open directory " + JoinPath(dir, name) +
                          (errno == ELOOP || errno == ENOTDIR
                               ? " (a symlink or not a directory: refused)"
                               : ""),
                      errno);
  }
  return fd;
}

Status RemoveTreeAt(int dirfd, const std::string& dir,
                    const std::string& name) {
  RemoveTop top{dirfd, dir, {}};
  K8S_RETURN_IF_ERROR(RemoveTreeAtDepth(top, dirfd, dir, name, 0));
  // Each pass takes kMaxTreeDepth levels off what was moved; the bound
  // stops a tree grown as fast as it is removed.
  for (int moves = 0; !top.moved.empty(); ++moves) {
    if (moves >= kMaxTreeMoves) {
      return FailedPreconditionError(
          "remove " + JoinPath(dir, name) + ": still " +
          std::to_string(top.moved.size()) + " directories deep inside after " +
          std::to_string(kMaxTreeMoves) + " moves (is something filling it?)");
    }
    std::string next = top.moved.back();
    top.moved.pop_back();
    K8S_RETURN_IF_ERROR(RemoveTreeAtDepth(top, dirfd, dir, next, 0));
  }
  return OkStatus();
}

StatusOr<std::string> SelfExeDir() {
  std::vector<char> buf(PATH_MAX + 1);
  ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n < 0) return ErrnoError("readlink /proc/self/exe", errno);
  std::string path(buf.data(), static_cast<size_t>(n));
  size_t slash = path.rfind('/');
  return slash == 0 ? std::string("/") : path.substr(0, slash);
}

const char* FileTypeName(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "of an unknown file type";
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  return dir == "/" ? dir + name : dir + "/" + name;
}

StatusOr<std::vector<std::string>> ListDirAt(int dirfd,
                                             const std::string& dir) {
  // fdopendir takes the fd it is given: a duplicate, so `dirfd` stays ours.
  int listed = ::dup(dirfd);
  if (listed < 0) return ErrnoError("dup", errno);
  std::unique_ptr<DIR, int (*)(DIR*)> d(::fdopendir(listed), ::closedir);
  if (d == nullptr) {
    int err = errno;
    ::close(listed);
    return ErrnoError("list " + dir, err);
  }
  // The duplicate shares `dirfd`'s offset: an earlier listing left it at
  // the end.
  ::rewinddir(d.get());
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d.get())) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  return names;
}

bool EnsurePrivateDir(const std::string& dir) {
  for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    std::string part = dir.substr(0, slash);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) return false;
    if (slash == std::string::npos) break;
  }
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
      st.st_uid != ::geteuid()) {
    return false;
  }
  return (st.st_mode & 077) == 0 || ::chmod(dir.c_str(), 0700) == 0;
}

}  // namespace k8s_agent
