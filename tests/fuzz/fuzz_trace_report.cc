// SPDX-License-Identifier: Apache-2.0
// Fuzz target: --report over a --trace file: parsing, the launch model
// and every output format.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/base/log.h"
#include "plugin/report/chrome_trace.h"
#include "plugin/report/gantt_svg.h"
#include "plugin/report/launch_model.h"
#include "plugin/report/report_json.h"
#include "plugin/report/report_text.h"
#include "plugin/report/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  k8s_agent::SetLogLevel(k8s_agent::LogLevel::kError);
  std::string_view in(reinterpret_cast<const char*>(data), size);
  k8s_agent::report::TraceInput input;
  if (!k8s_agent::report::ParseTraceText(in, "fuzz.trace", &input).ok()) {
    return 0;
  }
  auto job = k8s_agent::report::BuildJobLaunch(input.records);
  if (!job.ok()) return 0;
  const std::vector<std::string> files = {"fuzz.trace"};
  (void)k8s_agent::report::FormatTextReport(*job, files);
  (void)k8s_agent::report::FormatJsonReport(*job, files, input.warnings);
  (void)k8s_agent::report::FormatChromeTrace(*job);
  (void)k8s_agent::report::FormatGanttSvg(*job);
  return 0;
}
