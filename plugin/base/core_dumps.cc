// SPDX-License-Identifier: Apache-2.0
// DisableCoreDumps: setrlimit(2) and prctl(2).

#include "plugin/base/core_dumps.h"

#include <sys/prctl.h>
#include <sys/resource.h>

#include <cerrno>

namespace k8s_agent {

Status DisableCoreDumps() {
  struct rlimit none = {0, 0};
  if (::setrlimit(RLIMIT_CORE, &none) != 0) {
    return ErrnoError("setrlimit(RLIMIT_CORE, 0)", errno);
  }
  // Also covers a core_pattern pipe, which ignores RLIMIT_CORE.
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    return ErrnoError("prctl(PR_SET_DUMPABLE, 0)", errno);
  }
  return OkStatus();
}

}  // namespace k8s_agent
