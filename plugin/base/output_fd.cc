// SPDX-License-Identifier: Apache-2.0
// OutputFd: picks a way to write without blocking for each kind of fd.

#include "plugin/base/output_fd.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

namespace k8s_agent {

OutputFd::OutputFd(int fd) : fd_(fd) {
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    mode_ = Mode::kNone;
  } else if (S_ISSOCK(st.st_mode)) {
    mode_ = Mode::kSend;
  } else if (S_ISFIFO(st.st_mode) || ::isatty(fd)) {
    mode_ = Mode::kNoWait;
  } else {
    mode_ = Mode::kPlain;
  }
}

void OutputFd::FallBack() {
  // O_NOCTTY: a tty reopened here must not become our controlling tty.
  std::string path = "/proc/self/fd/" + std::to_string(fd_);
  int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd >= 0) {
    reopened_.reset(fd);
    mode_ = Mode::kReopened;
  } else {
    mode_ = Mode::kBounded;
  }
}

ssize_t OutputFd::Write(const char* data, size_t n) {
  switch (mode_) {
    case Mode::kNone:
      errno = EBADF;
      return -1;
    case Mode::kPlain:
      return ::write(fd_, data, n);
    case Mode::kSend:
      return ::send(fd_, data, n, MSG_DONTWAIT | MSG_NOSIGNAL);
    case Mode::kNoWait: {
      iovec v{const_cast<char*>(data), n};
      ssize_t r = ::pwritev2(fd_, &v, 1, -1, RWF_NOWAIT);
      if (r >= 0 || (errno != EOPNOTSUPP && errno != ENOSYS)) return r;
      FallBack();
      return Write(data, n);
    }
    case Mode::kReopened:
      return ::write(reopened_.get(), data, n);
    case Mode::kBounded: {
      pollfd p{fd_, POLLOUT, 0};
      if (::poll(&p, 1, 0) != 1) {
        errno = EAGAIN;
        return -1;
      }
      return ::write(fd_, data, std::min<size_t>(n, PIPE_BUF));
    }
  }
  errno = EBADF;
  return -1;
}

}  // namespace k8s_agent
