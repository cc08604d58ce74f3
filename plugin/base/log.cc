// SPDX-License-Identifier: Apache-2.0
// Line-atomic stderr logging.

#include "plugin/base/log.h"

#include <unistd.h>

#include <cerrno>

#include "plugin/base/strings.h"

namespace k8s_agent {
namespace {

LogLevel g_level = LogLevel::kWarning;
int g_fd = 2;
std::string& Origin() {
  static std::string* origin = new std::string();
  return *origin;
}

void WriteAll(int fd, const std::string& line) {
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // Nowhere left to report to.
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace

void SetLogOrigin(const std::string& origin) { Origin() = origin; }

void SetLogLevel(LogLevel level) { g_level = level; }
LogLevel GetLogLevel() { return g_level; }
bool LogEnabled(LogLevel level) { return level <= g_level; }
void SetLogFd(int fd) { g_fd = fd; }

void Log(LogLevel level, const std::string& message) {
  if (!LogEnabled(level)) return;
  // Messages quote pods' status.message, server banners and names: escape
  // here, once for every caller, so that no text can end the line early
  // (forging "k8s-agent: w-1: ..." for another host) or reach the terminal
  // as a control sequence. Not cut: the message is ours, only its bytes
  // may not be.
  std::string line = "k8s-agent";
  if (!Origin().empty()) line += " (" + Printable(Origin()) + ")";
  line += ": ";
  line += Printable(message, kNoPrintableLimit);
  line += '\n';
  WriteAll(g_fd, line);
}

}  // namespace k8s_agent
