// SPDX-License-Identifier: Apache-2.0
// FormatTextReport: fixed-width columns, no colour, no wider than needed.

#include "plugin/report/report_text.h"

#include <algorithm>

#include "plugin/base/strings.h"

namespace k8s_agent::report {
namespace {

std::string Pad(const std::string& s, size_t width, bool right = false) {
  if (s.size() >= width) return s;
  std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}

// Cuts to `width` with a trailing '~', so long names keep the columns.
std::string Fit(const std::string& s, size_t width) {
  return s.size() <= width ? s : s.substr(0, width - 1) + "~";
}

std::string WaitingList(const HostLaunch& h) {
  std::vector<std::string> names;
  for (const auto& w : h.waiting) names.push_back(w.second);
  return Join(names, ", ");
}

}  // namespace

std::string Offset(const JobLaunch& job, int64_t t_us) {
  return "+" + FormatMicrosPadded(t_us - job.t0_us);
}

std::string DescribeCritical(const JobLaunch& job) {
  if (!job.critical) return "no host reached its command";
  const CriticalPath& c = *job.critical;
  const HostLaunch& h = job.hosts[c.host];
  std::string s = h.host + " was last, at " + Offset(job, h.end_us) + "; ";
  if (c.created_late) {
    s += "its pod was created (or its agent began) " +
         FormatMicrosPadded(c.took_us) + " after the job started (median " +
         FormatMicrosPadded(c.median_us) + ")";
  } else {
    s += "its " + std::string(InfoFor(c.phase).title) + " phase took " +
         FormatMicrosPadded(c.took_us) + " (median " +
         FormatMicrosPadded(c.median_us) + ")";
    if (c.phase == Phase::kContainer || c.phase == Phase::kScheduling) {
      std::string waiting = WaitingList(h);
      if (!waiting.empty()) s += "; waiting reasons seen: " + waiting;
    }
    if (c.phase == Phase::kLauncher) {
      s += ": the pod was ready, mpirun (or the orted that launches it "
           "under tree spawn) asked for it late";
    }
  }
  if (h.restarts > 0) {
    s += "; " + std::to_string(h.restarts) + " container restart(s)";
  }
  for (size_t i : c.launched_by) {
    const HostLaunch& p = job.hosts[i];
    s += "; launched from " + p.host + " (its command started at " +
         (p.reached ? Offset(job, p.end_us) : std::string("never")) + ")";
  }
  return s;
}

namespace {

constexpr size_t kCol = 10;

std::string HostNotes(const HostLaunch& h) {
  std::vector<std::string> notes;
  if (h.failed()) notes.push_back("FAILED");
  if (h.already_running) notes.push_back("already running");
  if (h.restarts > 0) notes.push_back(std::to_string(h.restarts) + " restarts");
  std::string waiting = WaitingList(h);
  if (!waiting.empty()) notes.push_back("waited: " + waiting);
  if (h.skew && h.skew->ahead_us >= 1000) notes.push_back("clock skew");
  return Join(notes, "; ");
}

// One row per host, its name and node columns as wide as the widest (up to
// a cap, so one long name does not push the phases off the screen).
std::string HostTable(const JobLaunch& job) {
  size_t name_w = 4;
  size_t node_w = 4;
  for (const HostLaunch& h : job.hosts) {
    name_w = std::max(name_w, h.host.size());
    node_w = std::max(node_w, h.node.size());
  }
  name_w = std::min<size_t>(name_w, 40);
  node_w = std::min<size_t>(node_w, 24);
  std::string head = Pad("host", name_w) + "  " + Pad("node", node_w) + "  " +
                     Pad("first", kCol, true);
  for (int p = 0; p < kPhaseCount; ++p) {
    head += " " + Pad(InfoFor(PhaseAt(p)).title, kCol, true);
  }
  head += " " + Pad("started", kCol, true) + "  notes";
  std::string out = head + "\n";
  for (const HostLaunch& h : job.hosts) {
    std::string row = Pad(Fit(h.host, name_w), name_w) + "  " +
                      Pad(Fit(h.node.empty() ? "-" : h.node, node_w), node_w) +
                      "  " + Pad(Offset(job, h.first_us), kCol, true);
    for (int p = 0; p < kPhaseCount; ++p) {
      Phase phase = PhaseAt(p);
      std::string cell =
          h.HasPhase(phase) ? FormatMicrosPadded(h.PhaseUs(phase)) : "-";
      row += " " + Pad(cell, kCol, true);
    }
    row += " " + Pad(h.reached ? Offset(job, h.end_us) : "-", kCol, true);
    out += row + "  " + HostNotes(h) + "\n";
  }
  return out;
}

std::string PhaseTable(const JobLaunch& job) {
  std::string out = Pad("phase", 12) + Pad("hosts", 7, true) +
                    Pad("median", 10, true) + Pad("p90", 10, true) +
                    Pad("max", 10, true) + "  slowest host\n";
  for (const PhaseSummary& s : job.phases) {
    out += Pad(InfoFor(s.phase).title, 12) +
           Pad(std::to_string(s.hosts), 7, true) +
           Pad(FormatMicrosPadded(s.median_us), 10, true) +
           Pad(FormatMicrosPadded(s.p90_us), 10, true) +
           Pad(FormatMicrosPadded(s.max_us), 10, true) + "  " + s.max_host +
           "\n";
  }
  return out;
}

// The slowest and failed hosts, the notes, and what the columns mean.
std::string Footer(const JobLaunch& job) {
  std::string out;
  if (!job.slowest.empty()) {
    std::vector<std::string> names;
    for (size_t i : job.slowest) {
      names.push_back(job.hosts[i].host + " " +
                      Offset(job, job.hosts[i].end_us));
    }
    out += "slowest (started last): " + Join(names, ", ") + "\n";
  }
  for (size_t i : job.failed) {
    const HostLaunch& h = job.hosts[i];
    out += "failed: " + h.host + " at " + Offset(job, *h.failed_at) + ": " +
           Printable(h.failure, 400) + "\n";
  }
  for (const std::string& note : job.notes) out += "note: " + note + "\n";
  out += "phases:\n";
  for (int p = 0; p < kPhaseCount; ++p) {
    const PhaseInfo& info = InfoFor(PhaseAt(p));
    out += "  " + Pad(info.title, 11) + info.meaning + "\n";
  }
  out +=
      "pod times (created, scheduled, container running) are the API "
      "server's and\nnodes' clocks in whole seconds; the rest is the agent's "
      "clock.\n";
  return out;
}

}  // namespace

std::string FormatTextReport(const JobLaunch& job,
                             const std::vector<std::string>& files) {
  std::string out;
  out += "k8s-agent launch report: " + std::to_string(job.hosts.size()) +
         " host(s) from " + std::to_string(files.size()) + " trace file(s)\n";
  out += "  job start   " + FormatWallMicros(job.t0_us) +
         " (first pod created or first agent began)\n";
  out += "  all started " + Offset(job, job.end_us) + "  (" +
         std::to_string(job.reached) + " reached, " +
         std::to_string(job.failed.size()) + " failed)\n";
  out += "  critical    " + DescribeCritical(job) + "\n\n";
  out += HostTable(job) + "\n";
  out += PhaseTable(job) + "\n";
  out += Footer(job);
  return out;
}

}  // namespace k8s_agent::report
