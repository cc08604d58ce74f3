// SPDX-License-Identifier: Apache-2.0
// The text, JSON, Chrome and SVG writers over one synthetic job.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "plugin/report/chrome_trace.h"
#include "plugin/report/gantt_svg.h"
#include "plugin/report/report_json.h"
#include "plugin/report/report_text.h"
#include "plugin/report/trace_reader.h"
#include "tests/fakes/status_matchers.h"
#include "tests/report/trace_builder.h"

namespace k8s_agent::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

JobLaunch Job(int n, bool with_failure) {
  std::string text;
  for (int i = 0; i < n; ++i) {
    HostSpec h;
    h.host = "w-" + std::to_string(i);
    h.pid = 100 + i;
    int64_t jitter = (i * 37 % 100) * 10 * kMs;
    h.running_seen += jitter;
    *h.attempt += jitter;
    *h.ssh_ready += jitter;
    *h.started += jitter;
    if (with_failure && i == 1) {
      h.container_started.reset();
      h.failed = 4 * kSec;
      h.waiting = {"ErrImagePull"};
    }
    text += HostTrace(h);
  }
  TraceInput input;
  EXPECT_THAT(ParseTraceText(text, "t", &input), IsOk());
  auto job = BuildJobLaunch(input.records);
  EXPECT_THAT(job, IsOk());
  return *job;
}

TEST(TextReportTest, TableSummaryAndFailures) {
  JobLaunch job = Job(4, true);
  std::string text = FormatTextReport(job, {"t"});
  EXPECT_THAT(text, HasSubstr("4 host(s) from 1 trace file(s)"));
  EXPECT_THAT(text, HasSubstr("(3 reached, 1 failed)"));
  EXPECT_THAT(text, HasSubstr("critical    w-"));
  EXPECT_THAT(text,
              HasSubstr("failed: w-1 at +4.0s: pod default/w-0 is Pending"));
  EXPECT_THAT(text, HasSubstr("waited: ErrImagePull"));
  // Every table row has the same column layout: the "started" column of
  // each host row ends at the same offset as the header's.
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    lines.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  size_t header = 0;
  while (header < lines.size() && lines[header].rfind("host ", 0) != 0)
    ++header;
  ASSERT_LT(header + 4, lines.size());
  size_t col = lines[header].find("started") + 7;
  for (size_t i = header + 1; i <= header + 4; ++i) {
    ASSERT_GT(lines[i].size(), col) << lines[i];
    EXPECT_NE(lines[i][col - 1], ' ') << lines[i];
    EXPECT_EQ(lines[i][col], ' ') << lines[i];
  }
}

TEST(JsonReportTest, ParsesAndCarriesPhases) {
  JobLaunch job = Job(3, true);
  auto j =
      nlohmann::json::parse(FormatJsonReport(job, {"t"}, {"t:9: skipped"}));
  EXPECT_EQ(j["job"]["hosts"], 3);
  EXPECT_EQ(j["job"]["failed"], 1);
  EXPECT_EQ(j["hosts"].size(), 3u);
  EXPECT_EQ(j["failed"][0]["host"], "w-1");
  EXPECT_EQ(j["warnings"][0], "t:9: skipped");
  EXPECT_TRUE(j["critical"].is_object());
  const auto& h0 = j["hosts"][0];
  EXPECT_DOUBLE_EQ(h0["phases_ms"]["scheduling"].get<double>(), 1000.0);
  EXPECT_DOUBLE_EQ(h0["phases_ms"]["container"].get<double>(), 2000.0);
  EXPECT_TRUE(h0["marks_ms"]["ssh_ready"].is_number());
  EXPECT_DOUBLE_EQ(h0["marks_ms"]["initialized"].get<double>(), 1000.0);
  EXPECT_TRUE(h0["marks_ms"]["ready"].is_null());
  bool has_phase_summary = false;
  for (const auto& p : j["phases"]) has_phase_summary |= p["phase"] == "sshd";
  EXPECT_TRUE(has_phase_summary);
}

TEST(ChromeTraceTest, OneTrackPerHostSpansInOrder) {
  JobLaunch job = Job(5, true);
  auto j = nlohmann::json::parse(FormatChromeTrace(job));
  std::map<int, std::string> names;
  std::map<int, std::vector<std::pair<int64_t, int64_t>>> spans;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      names[e["tid"].get<int>()] = e["args"]["name"];
    } else if (e["ph"] == "X") {
      spans[e["tid"].get<int>()].push_back(
          {e["ts"].get<int64_t>(), e["dur"].get<int64_t>()});
    }
  }
  ASSERT_EQ(names.size(), 5u);
  for (const auto& [tid, list] : spans) {
    ASSERT_TRUE(names.count(tid));
    ASSERT_FALSE(list.empty());
    for (size_t i = 1; i < list.size(); ++i) {
      EXPECT_GE(list[i].first, list[i - 1].first + list[i - 1].second);
    }
  }
  EXPECT_EQ(spans.size(), 5u);
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1))
    ++n;
  return n;
}

double SvgHeight(const std::string& svg) {
  std::smatch m;
  std::regex re("height=\"([0-9.]+)\"");
  EXPECT_TRUE(std::regex_search(svg, m, re));
  return std::stod(m[1]);
}

TEST(GanttSvgTest, RowPerHostWithColouredPhases) {
  JobLaunch job = Job(8, true);
  std::string svg = FormatGanttSvg(job);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_THAT(svg, HasSubstr("</svg>"));
  for (int i = 0; i < 8; ++i) {
    EXPECT_THAT(svg, HasSubstr(">w-" + std::to_string(i) + "</text>"));
  }
  for (int p = 0; p < kPhaseCount; ++p) {
    EXPECT_THAT(svg, HasSubstr(InfoFor(PhaseAt(p)).colour));
  }
  EXPECT_THAT(svg, HasSubstr("stroke=\"#d62728\""));  // The failed span.
  EXPECT_THAT(svg, Not(HasSubstr("<script")));
  EXPECT_THAT(svg, Not(HasSubstr("href")));
}

TEST(GanttSvgTest, ThousandHostsStayLegible) {
  JobLaunch job = Job(1000, true);
  std::string svg = FormatGanttSvg(job);
  // Row labels are right-aligned texts in the label column.
  size_t rows = Count(svg, "text-anchor=\"end\"");
  EXPECT_LE(rows, kSvgGroupRows + 10);
  EXPECT_GE(rows, kSvgGroupRows);
  EXPECT_LT(SvgHeight(svg), 1000.0);  // One screen, not 1000 rows.
  EXPECT_THAT(svg, HasSubstr("1000 hosts: groups of"));
  EXPECT_THAT(svg, HasSubstr(">w-1</text>"));  // The failed host has a row.
  EXPECT_LT(svg.size(), 400u * 1024);
}

TEST(GanttSvgTest, EscapesNames) {
  std::string text = HostTrace(HostSpec{.host = "a<b>&\"c"});
  TraceInput input;
  ASSERT_THAT(ParseTraceText(text, "t", &input), IsOk());
  auto job = BuildJobLaunch(input.records);
  ASSERT_THAT(job, IsOk());
  std::string svg = FormatGanttSvg(*job);
  EXPECT_THAT(svg, HasSubstr("a&lt;b&gt;&amp;&quot;c"));
  EXPECT_THAT(svg, Not(HasSubstr("a<b>")));
}

}  // namespace
}  // namespace k8s_agent::report
