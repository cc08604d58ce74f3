// SPDX-License-Identifier: Apache-2.0
// Fuzz target: argv, environment and config file parsing of the launcher.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "launcher/options.h"

// Input: NUL-separated argv words; the first "\x01\x01" splits off the
// rest as the config file text, so both are fuzzed together.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string in(reinterpret_cast<const char*>(data), size);
  std::string config;
  size_t split = in.find("\x01\x01");
  if (split != std::string::npos) {
    config = in.substr(split + 2);
    in.resize(split);
  }
  std::vector<std::string> args;
  size_t start = 0;
  while (start < in.size() && args.size() < 256) {
    size_t end = in.find('\0', start);
    if (end == std::string::npos) end = in.size();
    args.push_back(in.substr(start, end - start));
    start = end + 1;
  }
  std::map<std::string, std::string> env = {
      {"HOME", "/nonexistent-home"}, {"K8S_AGENT_CONFIG", "/fuzz/config"}};
  auto read_file =
      [&](const std::string& path) -> k8s_agent::StatusOr<std::string> {
    if (path == "/fuzz/config") return config;
    return k8s_agent::NotFoundError(path);
  };
  (void)k8s_agent::ParseOptions(args, env, read_file);
  return 0;
}
