// SPDX-License-Identifier: Apache-2.0
// Non-blocking writes to an inherited output fd (stdout, stderr).

#ifndef K8S_AGENT_PLUGIN_BASE_OUTPUT_FD_H_
#define K8S_AGENT_PLUGIN_BASE_OUTPUT_FD_H_

#include <sys/types.h>

#include <cstddef>

#include "plugin/base/unique_fd.h"

namespace k8s_agent {

/// Writes to an fd the agent inherited without ever blocking, and without
/// setting O_NONBLOCK on it: that flag belongs to the open file
/// description, which mpirun, a shell or a terminal shares, and their own
/// writes would start failing with EAGAIN (OpenSSH sets it on pipes and
/// restores it at exit; a SIGKILL leaves it set). How, per kind of fd:
///  - regular files, block devices, /dev/null: plain writes (they never
///    wait for a reader);
///  - sockets: send(MSG_DONTWAIT);
///  - pipes: pwritev2(RWF_NOWAIT);
///  - where the kernel refuses RWF_NOWAIT (FIFOs, ttys, old kernels): a
///    second, non-blocking description of the same object, opened through
///    /proc/self/fd;
///  - if that fails too: at most PIPE_BUF bytes per write, and only after
///    poll said POLLOUT (a pipe then always has that much room).
class OutputFd {
 public:
  enum class Mode { kNone, kPlain, kSend, kNoWait, kReopened, kBounded };

  OutputFd() = default;
  /// `fd` stays owned by the caller; -1 means no output.
  explicit OutputFd(int fd);

  /// The fd to wait on for POLLOUT.
  int fd() const { return reopened_.valid() ? reopened_.get() : fd_; }
  Mode mode() const { return mode_; }

  /// Writes up to `n` bytes: the count written (> 0), or -1 with errno
  /// set (EAGAIN: nothing fits now, wait for POLLOUT on fd(); EPIPE: the
  /// reader is gone).
  ssize_t Write(const char* data, size_t n);

 private:
  void FallBack();

  int fd_ = -1;
  Mode mode_ = Mode::kNone;
  UniqueFd reopened_;
};

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_BASE_OUTPUT_FD_H_
