// SPDX-License-Identifier: Apache-2.0
// Fuzz target: ssh_config parsing, Host matching and Resolve.

#include <cstddef>
#include <cstdint>
#include <string>

#include "plugin/base/log.h"
#include "plugin/ssh/ssh_options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Resolve warns about every missing IdentityFile: keep stderr quiet.
  k8s_agent::SetLogLevel(k8s_agent::LogLevel::kError);
  std::string text(reinterpret_cast<const char*>(data), size);
  for (const char* host : {"w-0", "job-0.job.default.svc.cluster.local"}) {
    auto options = k8s_agent::ssh::ParseSshConfig(text, host, "fuzz");
    if (options.ok()) (void)k8s_agent::ssh::Resolve(*options);
  }
  // The first line as a Host pattern list, too.
  std::string patterns = text.substr(0, text.find('\n'));
  (void)k8s_agent::ssh::HostPatternMatches(patterns, "w-0");
  return 0;
}
