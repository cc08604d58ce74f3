// SPDX-License-Identifier: Apache-2.0
// Small string helpers shared by the parsers.

#ifndef K8S_AGENT_PLUGIN_BASE_STRINGS_H_
#define K8S_AGENT_PLUGIN_BASE_STRINGS_H_

#include <cstdint>
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

/// Percent-encodes all but RFC 3986's unreserved characters, for a query
/// value: "metadata.name=w0" becomes "metadata.name%3Dw0".
std::string PercentEncode(std::string_view value);
std::string ToLower(std::string_view s);

/// ssh's match_pattern: '*' matches any run, '?' one character; the rest
/// compares exactly (callers lowercase both sides for host names).
bool MatchPattern(std::string_view s, std::string_view pattern);

/// Levenshtein distance: the fewest one-character insertions, deletions
/// and substitutions that turn `a` into `b` (for "did you mean").
size_t EditDistance(std::string_view a, std::string_view b);

/// Parses a Go-style duration ("10m", "1h30m", "250ms", "1.5s"); a bare
/// number is seconds, as in ssh's ConnectTimeout. Negative values and
/// garbage are kInvalidArgument.
StatusOr<Duration> ParseDuration(std::string_view text);

// Durations and times for people. Both duration styles share one rule
// (one core): the unit is chosen by magnitude, under 1s milliseconds
// ("350ms"), under 1m seconds and tenths ("1.2s"), under 1h minutes and
// seconds, then hours and minutes; every part is truncated toward zero,
// so a value never shows as more than it was, nor as "1000ms" or "60.0s".
// A negative value (a clock skew) gets a "-". The styles differ only in
// the second part of minutes and hours, and both are needed:

/// "350ms", "1.2s", "10m0s", "1h2m": Go's spelling (time.Duration, the
/// kubelet's "back-off 5m0s"), which ParseDuration reads back, so a
/// message echoes a --timeout as the user could have typed it.
std::string FormatDuration(Duration d);
/// "850ms", "12.3s", "7m02s", "1h02m": the second part zero-padded, so a
/// right-aligned column of --report times lines up digit for digit; for
/// the report's tables, axis labels and notes, which count microseconds.
std::string FormatMicrosPadded(int64_t us);
/// "2026-12-01 09:46:40.123 UTC": microseconds since the Unix epoch (as
/// WallClockMicros), to the millisecond.
std::string FormatWallMicros(int64_t us);

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
