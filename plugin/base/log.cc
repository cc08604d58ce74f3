// SPDX-License-Identifier: Apache-2.0
// Line-atomic stderr logging.

#include "plugin/base/log.h"

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <ctime>

#include "plugin/base/clock.h"
#include "plugin/base/strings.h"

namespace k8s_agent {
namespace {

LogLevel g_level = LogLevel::kWarning;
int g_fd = 2;
bool g_timestamps = false;
std::string& Origin() {
  static std::string* origin = new std::string();
  return *origin;
}

/// "09:46:40.123 ": the time of day in UTC, to the millisecond.
std::string TimeOfDay() {
  const int64_t us = WallClockMicros();
  const time_t secs = static_cast<time_t>(us / 1000000);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%02d:%02d:%02d.%03d ", tm.tm_hour, tm.tm_min,
                tm.tm_sec, static_cast<int>((us / 1000) % 1000));
  return buf;
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
void SetLogTimestamps(bool on) { g_timestamps = on; }

void Log(LogLevel level, const std::string& message) {
  if (!LogEnabled(level)) return;
  // Messages quote pods' status.message, server banners and names: escape
  // here, once for every caller, so that no text can end the line early
  // (forging "k8s-agent: w-1: ..." for another host) or reach the terminal
  // as a control sequence. Not cut: the message is ours, only its bytes
  // may not be.
  // The time first: "k8s-agent: w-0: ..." stays whole for grep.
  std::string line = g_timestamps ? TimeOfDay() : std::string();
  line += "k8s-agent";
  if (!Origin().empty()) line += " (" + Printable(Origin()) + ")";
  line += ": ";
  line += Printable(message, kNoPrintableLimit);
  line += '\n';
  WriteAll(g_fd, line);
}

}  // namespace k8s_agent
