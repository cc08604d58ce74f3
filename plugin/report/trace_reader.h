// SPDX-License-Identifier: Apache-2.0
// Reads --trace files into records, skipping bad lines with a warning.

#ifndef K8S_AGENT_PLUGIN_REPORT_TRACE_READER_H_
#define K8S_AGENT_PLUGIN_REPORT_TRACE_READER_H_

#include <string>
#include <string_view>
#include <vector>

#include "plugin/base/status.h"
#include "plugin/report/trace_record.h"

namespace k8s_agent::report {

struct TraceInput {
  std::vector<TraceRecord> records;
  /// "FILE:LINE: skipped: WHY", at most kMaxWarningsPerFile per file,
  /// then one "FILE: N more bad lines skipped".
  std::vector<std::string> warnings;
};

inline constexpr int kMaxWarningsPerFile = 10;

/// Appends the records of one file's text to `input`; `file` names it in
/// warnings and records. A file with no usable record is
/// kInvalidArgument ("FILE: no k8s-agent trace record in N lines ..."):
/// reporting on nothing would hide a wrong path or a foreign file.
Status ParseTraceText(std::string_view text, const std::string& file,
                      TraceInput* input);

/// Reads and parses every file; the first unreadable or unusable one is
/// the error.
StatusOr<TraceInput> ReadTraceFiles(const std::vector<std::string>& paths);

}  // namespace k8s_agent::report

#endif  // K8S_AGENT_PLUGIN_REPORT_TRACE_READER_H_
