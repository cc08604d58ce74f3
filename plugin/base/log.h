// SPDX-License-Identifier: Apache-2.0
// Diagnostics on stderr. stdout belongs to the remote command.

#ifndef K8S_AGENT_PLUGIN_BASE_LOG_H_
#define K8S_AGENT_PLUGIN_BASE_LOG_H_

#include <string>

namespace k8s_agent {

enum class LogLevel { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };

/// Messages at or below this level are printed. Default kWarning: errors,
/// warnings and progress lines; -q lowers it to kError, -v raises it.
void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
bool LogEnabled(LogLevel level);

/// Redirects logging to `fd` (tests); default 2.
void SetLogFd(int fd);

/// Starts every line with the wall-clock time, "HH:MM:SS.mmm " (UTC, as
/// the trace and kubectl's timestamps), so -v lines can be laid beside
/// pod events and other agents' lines. Off by default: the lines a job
/// shows without -v stay as they were. main.cc turns it on with -v.
void SetLogTimestamps(bool on);

/// Names where this agent runs when that is not where a person reads its
/// lines: "k8s-agent (ORIGIN): <message>". Empty (the default): none.
void SetLogOrigin(const std::string& origin);

/// Writes "[HH:MM:SS.mmm ]k8s-agent: <message>\n" in one write(2), so lines
/// from the many agents mpirun starts at once never interleave mid-line.
/// `message` is one line: control characters in it (a newline too) and bytes
/// that are not UTF-8 are written as \xNN (Printable()).
void Log(LogLevel level, const std::string& message);

inline void LogError(const std::string& m) { Log(LogLevel::kError, m); }
inline void LogWarning(const std::string& m) { Log(LogLevel::kWarning, m); }
inline void LogInfo(const std::string& m) { Log(LogLevel::kInfo, m); }
inline void LogDebug(const std::string& m) { Log(LogLevel::kDebug, m); }

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_BASE_LOG_H_
