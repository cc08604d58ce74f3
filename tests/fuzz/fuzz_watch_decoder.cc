// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the watch stream decoder, fed in arbitrary chunks.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "plugin/kube/watch_decoder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  // The first byte picks the chunk size, so chunk boundaries are fuzzed
  // too; a small event limit reaches the size-limit path.
  size_t chunk = in.empty() ? 1 : 1 + static_cast<unsigned char>(in[0]) % 64;
  if (!in.empty()) in.remove_prefix(1);
  k8s_agent::kube::WatchDecoder decoder(4096);
  std::vector<k8s_agent::kube::WatchEvent> events;
  for (size_t i = 0; i < in.size(); i += chunk) {
    if (!decoder.Feed(in.substr(i, chunk), &events).ok()) break;
  }
  (void)decoder.Finish(&events);
  // Each line on its own as well.
  size_t start = 0;
  while (start <= in.size()) {
    size_t end = in.find('\n', start);
    if (end == std::string_view::npos) end = in.size();
    (void)k8s_agent::kube::ParseWatchEvent(in.substr(start, end - start));
    start = end + 1;
  }
  return 0;
}
