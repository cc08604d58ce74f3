// SPDX-License-Identifier: Apache-2.0
// Fuzz target: ssh_config parsing, Host matching and Resolve.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "plugin/base/log.h"
#include "plugin/ssh/ssh_config.h"
#include "plugin/ssh/ssh_options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Resolve warns about every missing IdentityFile: keep stderr quiet.
  k8s_agent::SetLogLevel(k8s_agent::LogLevel::kError);
  std::string text(reinterpret_cast<const char*>(data), size);
  // The text as the user's config, including itself (Include loops) and
  // never running a command (Match exec answers from the text's length).
  k8s_agent::ssh::ConfigEnv env;
  env.local_user = "u";
  env.home = "/h";
  env.read_file = [&](const std::string&) {
    return k8s_agent::StatusOr<k8s_agent::ssh::ConfigText>({text});
  };
  env.glob = [](const std::string& p) { return std::vector<std::string>{p}; };
  env.run_exec = [](const std::string& c) {
    return k8s_agent::StatusOr<bool>(c.size() % 2 == 0);
  };
  for (const char* host : {"w-0", "job-0.job.default.svc.cluster.local"}) {
    k8s_agent::ssh::SshOptions options;
    std::vector<std::string> notes;
    if (k8s_agent::ssh::ReadSshConfigs({{"/h/.ssh/config", true, false}}, host,
                                       env, &options, &notes)
            .ok()) {
      (void)k8s_agent::ssh::Resolve(options, host);
    }
  }
  // The first line as a Host pattern list, too.
  std::string patterns = text.substr(0, text.find('\n'));
  (void)k8s_agent::ssh::HostPatternMatches(patterns, "w-0");
  return 0;
}
