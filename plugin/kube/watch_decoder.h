// SPDX-License-Identifier: Apache-2.0
// Incremental decoder for newline-delimited watch events.

#ifndef K8S_AGENT_PLUGIN_KUBE_WATCH_DECODER_H_
#define K8S_AGENT_PLUGIN_KUBE_WATCH_DECODER_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/base/status.h"
#include "plugin/kube/pod.h"

namespace k8s_agent::kube {

/// Parses one event line: {"type":"ADDED","object":{...}}. An ERROR event's
/// embedded Status object is classified like an HTTP answer (410 ->
/// kExpired, 429 -> kResourceExhausted, 5xx -> kUnavailable). Malformed
/// JSON or an unknown type is kInternal with a short printable excerpt.
StatusOr<WatchEvent> ParseWatchEvent(std::string_view line);

/// Splits a byte stream into events. The server frames each event with
/// '\n', but the transport delivers arbitrary chunks (one byte to many
/// kilobytes), so the partial tail is kept between calls. Memory is
/// bounded: a single event larger than `max_event_bytes` is an error.
class WatchDecoder {
 public:
  /// Real pods are a few KiB; 16 MiB is far above any sane object.
  static constexpr size_t kDefaultMaxEventBytes = 16u << 20;

  explicit WatchDecoder(size_t max_event_bytes = kDefaultMaxEventBytes)
      : max_event_bytes_(max_event_bytes) {}

  /// Appends `bytes` and moves every complete event to `events`. After an
  /// error the decoder stays failed and returns that error again.
  Status Feed(std::string_view bytes, std::vector<WatchEvent>* events);

  /// At the end of the stream: a last event without '\n' is decoded;
  /// blank trailing bytes are fine.
  Status Finish(std::vector<WatchEvent>* events);

  /// Bytes of an incomplete event held right now.
  size_t buffered() const { return tail_.size(); }

 private:
  Status DecodeLine(std::string_view line, std::vector<WatchEvent>* events);

  size_t max_event_bytes_;
  std::string tail_;
  Status error_;
};

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_WATCH_DECODER_H_
