// SPDX-License-Identifier: Apache-2.0
// SignalWatcher over signalfd(2).

#include "plugin/base/signals.h"

#include <signal.h>
#include <sys/signalfd.h>

#include <cerrno>
#include <memory>

namespace k8s_agent {
namespace {

sigset_t TerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  // Its default action dumps core (the key, the token): handled like the
  // others instead, and forwarded, as ssh forwards it.
  sigaddset(&set, SIGQUIT);
  return set;
}

}  // namespace

StatusOr<std::unique_ptr<SignalWatcher>> SignalWatcher::Create() {
  ::signal(SIGPIPE, SIG_IGN);
  sigset_t set = TerminationSignals();
  if (sigprocmask(SIG_BLOCK, &set, nullptr) != 0) {
    return ErrnoError("sigprocmask", errno);
  }
  int fd = ::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd < 0) return ErrnoError("signalfd", errno);
  std::unique_ptr<SignalWatcher> w(new SignalWatcher());
  w->fd_.reset(fd);
  return w;
}

SignalWatcher::~SignalWatcher() {
  // Unblock so a child exec'd later (none today) or a signal that arrives
  // after the loop ends gets the default action again.
  sigset_t set = TerminationSignals();
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
}

void SignalWatcher::CollectFds(std::vector<pollfd>* fds) {
  fds->push_back({fd_.get(), POLLIN, 0});
}

void SignalWatcher::OnFdReady(int /*fd*/, short /*revents*/,
                              TimePoint /*now*/) {
  signalfd_siginfo info;
  while (::read(fd_.get(), &info, sizeof(info)) ==
         static_cast<ssize_t>(sizeof(info))) {
    if (received_ == 0) received_ = static_cast<int>(info.ssi_signo);
  }
}

}  // namespace k8s_agent
