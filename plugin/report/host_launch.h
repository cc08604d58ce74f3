// SPDX-License-Identifier: Apache-2.0
// One host's records -> its marks and phases (see launch_model.h).

#ifndef K8S_AGENT_PLUGIN_REPORT_HOST_LAUNCH_H_
#define K8S_AGENT_PLUGIN_REPORT_HOST_LAUNCH_H_

#include <cstdint>
#include <vector>

#include "plugin/report/launch_model.h"
#include "plugin/report/trace_record.h"

namespace k8s_agent::report {

/// How coarse a pod timestamp is: a whole second (metav1.Time, what the
/// API writes) covers [t, t + 1 s); a time with a fraction is exact.
inline int64_t StampResolutionUs(int64_t us) {
  return us % 1000000 == 0 ? 1000000 : 0;
}

/// The marks of one agent run for one host; `records` are that run's, in
/// file order. Spans are not built yet: they depend on the whole job.
HostLaunch CollectHostMarks(const std::vector<const TraceRecord*>& records);

/// Builds host->spans from the marks. Spans before `clip_us` are cut
/// there (for pods that were up before the launch began; pass INT64_MIN
/// for none).
void BuildSpans(int64_t clip_us, HostLaunch* host);

}  // namespace k8s_agent::report

#endif  // K8S_AGENT_PLUGIN_REPORT_HOST_LAUNCH_H_
