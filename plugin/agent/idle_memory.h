// SPDX-License-Identifier: Apache-2.0
// Gives back what the API phase used before the agent sits attached.

#ifndef K8S_AGENT_PLUGIN_AGENT_IDLE_MEMORY_H_
#define K8S_AGENT_PLUGIN_AGENT_IDLE_MEMORY_H_

#include <cstddef>

namespace k8s_agent {

struct ReleasedMemory {
  // Size of the ranges advised away (not all of it was resident).
  size_t advised_bytes = 0;
};

/// Called once the API client is gone and the command runs: an agent may
/// then stay attached for the whole job (one per child host with
/// tree spawn), so what only start-up needed should not stay counted
/// against it.
///
/// 1. malloc_trim(0) returns the freed heap (curl, OpenSSL's TLS state,
///    JSON) to the kernel.
/// 2. The binary's read-only, file-backed mappings (code, constants,
///    relocation tables) are unmapped from this process with
///    MADV_DONTNEED: the pages usually stay in the page cache, and
///    whatever the SSH phase runs is mapped back by a minor fault when it
///    runs (a major fault, with I/O, if memory pressure evicted them in
///    between); the code of the API phase (curl, TLS, JSON, YAML) is not.
///    Being static, the binary's pages are shared only with other agents,
///    so every one of them otherwise holds the whole start-up's code in
///    its PSS. Only mappings of /proc/self/exe that are read-only, private
///    and hold no anonymous page are touched: writable data, RELRO, text
///    relocations or breakpoints are private copies that MADV_DONTNEED
///    would revert to the file's bytes.
ReleasedMemory ReleaseStartupMemory();

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_AGENT_IDLE_MEMORY_H_
