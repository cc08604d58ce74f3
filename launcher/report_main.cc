// SPDX-License-Identifier: Apache-2.0
// ReportMain: read, model, write. All logic lives in plugin/report.

#include "launcher/report_main.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "plugin/base/exit_status.h"
#include "plugin/base/log.h"
#include "plugin/base/unique_fd.h"
#include "plugin/report/chrome_trace.h"
#include "plugin/report/gantt_svg.h"
#include "plugin/report/launch_model.h"
#include "plugin/report/report_json.h"
#include "plugin/report/report_text.h"
#include "plugin/report/trace_reader.h"

namespace k8s_agent {
namespace {

// Writes to FILE.tmp and renames, so a viewer never opens half a chart.
Status WriteFile(const std::string& path, const std::string& data) {
  std::string tmp = path + ".tmp";
  UniqueFd fd(
      ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return ErrnoError("open " + tmp, errno);
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd.get(), data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      Status s = ErrnoError("write " + tmp, errno);
      ::unlink(tmp.c_str());
      return s;
    }
    done += static_cast<size_t>(n);
  }
  fd.reset();
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status s = ErrnoError("rename " + tmp + " to " + path, errno);
    ::unlink(tmp.c_str());
    return s;
  }
  return OkStatus();
}

}  // namespace

int ReportMain(const Options& options) {
  StatusOr<report::TraceInput> input = report::ReadTraceFiles(options.hosts);
  if (!input.ok()) {
    LogError("--report: " + input.status().message());
    return kFailureExit;
  }
  for (const std::string& w : input->warnings) LogWarning("--report: " + w);
  StatusOr<report::JobLaunch> job = report::BuildJobLaunch(input->records);
  if (!job.ok()) {
    LogError("--report: " + job.status().message());
    return kFailureExit;
  }
  // The files first: a reader that stops early (| head) must not cost
  // the chart.
  int rc = 0;
  auto write = [&](const std::string& path, const std::string& data,
                   const char* what) {
    if (path.empty()) return;
    Status s = WriteFile(path, data);
    if (!s.ok()) {
      LogError("--report: writing the " + std::string(what) + ": " +
               s.message() + " (check the directory exists and is writable)");
      rc = kFailureExit;
      return;
    }
    // Said at the default level: the caller asked for the file and needs
    // to know where it went; -q silences it.
    if (GetLogLevel() >= LogLevel::kWarning) {
      std::fprintf(stderr, "k8s-agent: --report: wrote the %s to %s\n", what,
                   path.c_str());
    }
  };
  write(options.svg_file, report::FormatGanttSvg(*job), "SVG Gantt chart");
  write(options.chrome_file, report::FormatChromeTrace(*job),
        "Chrome trace (open in ui.perfetto.dev or chrome://tracing)");
  std::string text =
      options.format == OutputFormat::kJson
          ? report::FormatJsonReport(*job, options.hosts, input->warnings)
          : report::FormatTextReport(*job, options.hosts);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  return rc;
}

}  // namespace k8s_agent
