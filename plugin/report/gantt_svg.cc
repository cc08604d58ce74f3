// SPDX-License-Identifier: Apache-2.0
// FormatGanttSvg.

#include "plugin/report/gantt_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <vector>

#include "plugin/base/strings.h"
#include "plugin/report/report_text.h"

namespace k8s_agent::report {
namespace {

constexpr double kWidth = 1000;
constexpr double kLabelW = 190;
constexpr double kLeft = 200;
constexpr double kRight = 980;
constexpr double kTop = 84;
constexpr double kRowH = 18;
constexpr double kBarH = 12;
constexpr size_t kOwnRows = 5;  // Slowest / failed hosts kept when grouping.

std::string Esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        // Control bytes are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t') out += c;
    }
  }
  return out;
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

// One drawn row: bars of (phase, start, end, failed), a label, a whisker.
struct Bar {
  Phase phase;
  int64_t start, end;
  bool failed;
  std::string tip;
};
struct Row {
  std::string label;
  std::vector<Bar> bars;
  bool whisker = false;
  int64_t w_start = 0, w_end = 0;
  bool failed_mark = false;
  int64_t failed_at = 0;
  std::string tip;
};

int64_t Median(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

Row HostRow(const JobLaunch& job, const HostLaunch& h) {
  Row r;
  r.label = h.host;
  r.tip = h.host + (h.node.empty() ? "" : " on " + h.node);
  for (const Span& s : h.spans) {
    r.bars.push_back({s.phase, s.start_us, s.end_us, s.failed,
                      h.host + ": " + InfoFor(s.phase).title + " " +
                          FormatMicrosPadded(s.duration_us()) + " (from " +
                          Offset(job, s.start_us) + ")"});
  }
  if (h.failed()) {
    r.failed_mark = true;
    r.failed_at = *h.failed_at;
    r.tip += ": FAILED: " + h.failure;
  }
  return r;
}

Row GroupRow(const JobLaunch& job, const std::vector<size_t>& members) {
  Row r;
  const HostLaunch& a = job.hosts[members.front()];
  const HostLaunch& b = job.hosts[members.back()];
  r.label = members.size() == 1 ? a.host
                                : a.host + " .. " + b.host + " (" +
                                      std::to_string(members.size()) + ")";
  r.whisker = true;
  r.w_start = INT64_MAX;
  r.w_end = INT64_MIN;
  for (int p = 0; p < kPhaseCount; ++p) {
    std::vector<int64_t> starts, ends;
    for (size_t i : members) {
      for (const Span& s : job.hosts[i].spans) {
        if (s.phase != PhaseAt(p)) continue;
        starts.push_back(s.start_us);
        ends.push_back(s.end_us);
      }
    }
    if (starts.empty()) continue;
    int64_t s = Median(starts), e = Median(ends);
    r.bars.push_back({PhaseAt(p), s, std::max(s, e), false,
                      r.label + ": median " + InfoFor(PhaseAt(p)).title + " " +
                          FormatMicrosPadded(std::max<int64_t>(0, e - s))});
  }
  for (size_t i : members) {
    r.w_start = std::min(r.w_start, job.hosts[i].first_us);
    r.w_end = std::max(r.w_end, job.hosts[i].end_us);
  }
  r.tip = r.label + ": from " + Offset(job, r.w_start) + " to " +
          Offset(job, r.w_end);
  return r;
}

std::vector<Row> BuildRows(const JobLaunch& job, std::string* caption) {
  std::vector<Row> rows;
  if (job.hosts.size() <= kMaxSvgHostRows) {
    for (const HostLaunch& h : job.hosts) rows.push_back(HostRow(job, h));
    *caption = std::to_string(job.hosts.size()) + " hosts, one row each";
    return rows;
  }
  std::set<size_t> own;
  for (size_t i = 0; i < job.slowest.size() && own.size() < kOwnRows; ++i) {
    own.insert(job.slowest[i]);
  }
  for (size_t i = 0; i < job.failed.size() && i < kOwnRows; ++i) {
    own.insert(job.failed[i]);
  }
  std::vector<size_t> rest;
  for (size_t i = 0; i < job.hosts.size(); ++i) {
    if (own.count(i) == 0) rest.push_back(i);
  }
  size_t per = (rest.size() + kSvgGroupRows - 1) / kSvgGroupRows;
  for (size_t k = 0; k < rest.size(); k += per) {
    std::vector<size_t> members(
        rest.begin() + static_cast<ptrdiff_t>(k),
        rest.begin() + static_cast<ptrdiff_t>(std::min(rest.size(), k + per)));
    rows.push_back(GroupRow(job, members));
  }
  for (size_t i : own) rows.push_back(HostRow(job, job.hosts[i]));
  *caption = std::to_string(job.hosts.size()) + " hosts: groups of " +
             std::to_string(per) +
             " in start order (median phases, line = earliest start to "
             "latest end), then the slowest and failed hosts";
  return rows;
}

// 1, 2 or 5 times a power of ten, so that about 8 ticks fit.
int64_t TickStep(int64_t span_us) {
  double raw = static_cast<double>(std::max<int64_t>(span_us, 1)) / 8.0;
  double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= raw) return std::max<int64_t>(1, static_cast<int64_t>(m * p));
  }
  return static_cast<int64_t>(10 * p);
}

// Where on the chart a time falls: the job's start at kLeft, its end (the
// latest mark drawn) at kRight.
struct TimeAxis {
  int64_t t0_us = 0;
  int64_t span_us = 0;

  double X(int64_t t) const {
    return kLeft + (kRight - kLeft) * static_cast<double>(t - t0_us) /
                       static_cast<double>(span_us);
  }
};

TimeAxis AxisFor(const JobLaunch& job) {
  int64_t end = job.end_us;
  for (const HostLaunch& h : job.hosts) {
    end = std::max(end, h.end_us);
    for (const Span& s : h.spans) end = std::max(end, s.end_us);
  }
  return TimeAxis{job.t0_us, std::max<int64_t>(end - job.t0_us, 1000)};
}

// The title line and, under it, the job's wall-clock start and the caption.
std::string TitleSvg(const JobLaunch& job, const std::string& caption) {
  std::string title = "k8s-agent launch: " + std::to_string(job.hosts.size()) +
                      " hosts, all started " + Offset(job, job.end_us);
  if (!job.failed.empty()) {
    title += ", " + std::to_string(job.failed.size()) + " failed";
  }
  return "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">" +
         Esc(title) + "</text>\n" +
         "<text x=\"10\" y=\"36\" fill=\"#555555\">" +
         Esc("from " + FormatWallMicros(job.t0_us) + "; " + caption) +
         "</text>\n";
}

std::string LegendSvg() {
  std::string o;
  double lx = 10;
  for (int p = 0; p < kPhaseCount; ++p) {
    const PhaseInfo& info = InfoFor(PhaseAt(p));
    o += "<rect x=\"" + Num(lx) +
         "\" y=\"46\" width=\"12\" height=\"12\" fill=\"" + info.colour +
         "\"><title>" + Esc(info.meaning) + "</title></rect>\n";
    o += "<text x=\"" + Num(lx + 16) + "\" y=\"56\">" + Esc(info.title) +
         "</text>\n";
    lx += 22 + 7.0 * static_cast<double>(std::string(info.title).size()) + 14;
  }
  o +=
      "<rect x=\"" + Num(lx) +
      "\" y=\"46\" width=\"12\" height=\"12\" fill=\"none\" stroke=\"#d62728\" "
      "stroke-width=\"2\"/>\n<text x=\"" +
      Num(lx + 16) + "\" y=\"56\">failed</text>\n";
  return o;
}

// The time axis labels and a grid line per tick down to `chart_bottom`.
std::string GridSvg(const TimeAxis& axis, double chart_bottom) {
  std::string o;
  const int64_t step = TickStep(axis.span_us);
  for (int64_t t = 0; t <= axis.span_us; t += step) {
    double gx = axis.X(axis.t0_us + t);
    o += "<line x1=\"" + Num(gx) + "\" y1=\"" + Num(kTop - 6) + "\" x2=\"" +
         Num(gx) + "\" y2=\"" + Num(chart_bottom) + "\" stroke=\"#e0e0e0\"/>\n";
    o += "<text x=\"" + Num(gx) + "\" y=\"" + Num(kTop - 9) +
         "\" text-anchor=\"middle\" fill=\"#555555\">+" +
         Esc(FormatMicrosPadded(t)) + "</text>\n";
  }
  return o;
}

// Row `i`: its label, whisker, bars and failed mark.
std::string RowSvg(const Row& r, size_t i, const TimeAxis& axis) {
  std::string o;
  const double y = kTop + kRowH * static_cast<double>(i);
  const double by = y + (kRowH - kBarH) / 2;
  std::string label =
      r.label.size() > 30 ? r.label.substr(0, 29) + "~" : r.label;
  o += "<text x=\"" + Num(kLabelW) + "\" y=\"" + Num(y + kRowH - 5) +
       "\" text-anchor=\"end\"><title>" + Esc(r.tip) + "</title>" + Esc(label) +
       "</text>\n";
  if (r.whisker) {
    double wy = y + kRowH / 2;
    o += "<line x1=\"" + Num(axis.X(r.w_start)) + "\" y1=\"" + Num(wy) +
         "\" x2=\"" + Num(axis.X(r.w_end)) + "\" y2=\"" + Num(wy) +
         "\" stroke=\"#333333\" stroke-width=\"1\"/>\n";
  }
  for (const Bar& b : r.bars) {
    double bx = axis.X(b.start);
    double bw = std::max(1.0, axis.X(b.end) - bx);
    o += "<rect x=\"" + Num(bx) + "\" y=\"" + Num(by) + "\" width=\"" +
         Num(bw) + "\" height=\"" + Num(kBarH) + "\" fill=\"" +
         InfoFor(b.phase).colour + "\"" +
         (b.failed ? " stroke=\"#d62728\" stroke-width=\"2\"" : "") +
         "><title>" + Esc(b.tip) + "</title></rect>\n";
  }
  if (r.failed_mark) {
    double fx = axis.X(r.failed_at);
    o += "<text x=\"" + Num(fx + 3) + "\" y=\"" + Num(y + kRowH - 5) +
         "\" fill=\"#d62728\" font-weight=\"bold\"><title>" + Esc(r.tip) +
         "</title>failed</text>\n";
  }
  return o;
}

// The critical path, cut to the width; the whole of it in the tooltip.
std::string FooterSvg(const JobLaunch& job, double height) {
  std::string footer = job.critical ? "critical path: " + DescribeCritical(job)
                                    : std::string("no host started");
  // About 6 px per character at 11 px: keep the line inside the width.
  if (footer.size() > 160) footer = footer.substr(0, 157) + "...";
  return "<text x=\"10\" y=\"" + Num(height - 10) + "\" fill=\"#555555\">" +
         Esc(footer) + "<title>" +
         Esc(job.critical ? DescribeCritical(job) : "") + "</title></text>\n";
}

}  // namespace

std::string FormatGanttSvg(const JobLaunch& job) {
  std::string caption;
  std::vector<Row> rows = BuildRows(job, &caption);
  const TimeAxis axis = AxisFor(job);
  const double chart_bottom = kTop + kRowH * static_cast<double>(rows.size());
  const double height = chart_bottom + 30;

  std::string o;
  o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(kWidth) +
       "\" height=\"" + Num(height) + "\" viewBox=\"0 0 " + Num(kWidth) + " " +
       Num(height) + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  o += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  o += TitleSvg(job, caption);
  o += LegendSvg();
  o += GridSvg(axis, chart_bottom);
  for (size_t i = 0; i < rows.size(); ++i) o += RowSvg(rows[i], i, axis);
  o += FooterSvg(job, height);
  o += "</svg>\n";
  return o;
}

}  // namespace k8s_agent::report
