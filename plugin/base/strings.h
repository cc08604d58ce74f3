// SPDX-License-Identifier: Apache-2.0
// Small string helpers shared by the parsers.

#ifndef K8S_AGENT_PLUGIN_BASE_STRINGS_H_
#define K8S_AGENT_PLUGIN_BASE_STRINGS_H_

#include <string>
#include <string_view>
#include <vector>

#include "plugin/base/clock.h"
#include "plugin/base/status.h"

namespace k8s_agent {

std::string Join(const std::vector<std::string>& words, std::string_view sep);
/// True if `words` holds `word`.
bool Contains(const std::vector<std::string>& words, std::string_view word);
std::vector<std::string> Split(std::string_view s, char sep);
std::string_view Trim(std::string_view s);
bool StartsWith(std::string_view s, std::string_view prefix);
bool EndsWith(std::string_view s, std::string_view suffix);
std::string ToLower(std::string_view s);

/// ssh's match_pattern: '*' matches any run, '?' one character; the rest
/// compares exactly (callers lowercase both sides for host names).
bool MatchPattern(std::string_view s, std::string_view pattern);

/// Parses a Go-style duration ("10m", "1h30m", "250ms", "1.5s"); a bare
/// number is seconds, as in ssh's ConnectTimeout. Negative values and
/// garbage are kInvalidArgument.
StatusOr<Duration> ParseDuration(std::string_view text);

/// "1.2s", "350ms", "10m0s": the inverse of ParseDuration, for messages.
std::string FormatDuration(Duration d);

/// Parses a non-negative decimal integer that fits in int.
StatusOr<int> ParseInt(std::string_view text);

/// Makes arbitrary bytes safe to print in one log line: C0 controls
/// (newline too), DEL, C1 controls (raw or as UTF-8) and bytes that are not
/// valid UTF-8 become \xNN; printable UTF-8 is kept. Escaping twice changes
/// nothing. Log() applies it to every message; callers use it to quote (and
/// bound) what a server or user sent inside a Status.
std::string Printable(std::string_view s, size_t max_len = 256);
/// Printable()'s max_len for "no limit".
constexpr size_t kNoPrintableLimit = std::string_view::npos;

/// Reads a whole file; kNotFound / kPermissionDenied name the path.
StatusOr<std::string> ReadFileToString(const std::string& path,
                                       size_t max_bytes = 16 << 20);

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_BASE_STRINGS_H_
