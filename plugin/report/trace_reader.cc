// SPDX-License-Identifier: Apache-2.0
// ParseTraceText / ReadTraceFiles.

#include "plugin/report/trace_reader.h"

#include "plugin/base/strings.h"

namespace k8s_agent::report {
namespace {

// A trace from 10,000 agents over a long job stays far below this; a
// bigger file is more likely a wrong path (a core dump, a log).
constexpr size_t kMaxTraceBytes = size_t{1} << 30;

}  // namespace

Status ParseTraceText(std::string_view text, const std::string& file,
                      TraceInput* input) {
  size_t usable = 0;
  int bad = 0;
  int line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    bool last_unterminated = end == std::string_view::npos;
    if (last_unterminated) end = text.size();
    std::string_view line = Trim(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_no;
    if (line.empty()) continue;
    StatusOr<TraceRecord> record = ParseTraceLine(line);
    if (!record.ok()) {
      if (++bad <= kMaxWarningsPerFile) {
        std::string why = record.status().message();
        if (last_unterminated) why += "; the last line has no newline";
        input->warnings.push_back(file + ":" + std::to_string(line_no) +
                                  ": skipped: " + why + ": \"" +
                                  Printable(line, 80) + "\"");
      }
      continue;
    }
    record->file = file;
    record->line = line_no;
    input->records.push_back(std::move(record).value());
    ++usable;
  }
  if (bad > kMaxWarningsPerFile) {
    input->warnings.push_back(file + ": " +
                              std::to_string(bad - kMaxWarningsPerFile) +
                              " more bad lines skipped");
  }
  if (usable == 0) {
    return InvalidArgumentError(
        file + ": no k8s-agent trace record in " + std::to_string(line_no) +
        " line(s) (is it a file written by --trace / K8S_AGENT_TRACE?)");
  }
  return OkStatus();
}

StatusOr<TraceInput> ReadTraceFiles(const std::vector<std::string>& paths) {
  TraceInput input;
  for (const std::string& path : paths) {
    StatusOr<std::string> text = ReadFileToString(path, kMaxTraceBytes);
    if (!text.ok()) {
      return Status(text.status().code(),
                    "reading trace " + path + ": " + text.status().message());
    }
    K8S_RETURN_IF_ERROR(ParseTraceText(*text, path, &input));
  }
  return input;
}

}  // namespace k8s_agent::report
