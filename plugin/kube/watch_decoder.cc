// SPDX-License-Identifier: Apache-2.0
// WatchDecoder: line framing with a size bound, then event parsing.

#include "plugin/kube/watch_decoder.h"

#include <nlohmann/json.hpp>

#include "plugin/base/strings.h"
#include "plugin/kube/api_status.h"
#include "plugin/kube/json_depth.h"
#include "plugin/kube/pod_json.h"

namespace k8s_agent::kube {
namespace {

std::string Excerpt(std::string_view line) {
  return "\"" + Printable(line, 120) + "\"" +
         (line.size() > 120 ? " (" + std::to_string(line.size()) + " bytes)"
                            : "");
}

}  // namespace

StatusOr<WatchEvent> ParseWatchEvent(std::string_view line) {
  Status depth = CheckJsonDepth(line);
  if (!depth.ok()) {
    return InternalError("malformed watch event: " + depth.message() + " " +
                         Excerpt(line));
  }
  nlohmann::json value = nlohmann::json::parse(line, nullptr, false);
  if (value.is_discarded() || !value.is_object()) {
    return InternalError("malformed watch event " + Excerpt(line));
  }
  auto type_it = value.find("type");
  auto object_it = value.find("object");
  if (type_it == value.end() || !type_it->is_string() ||
      object_it == value.end() || !object_it->is_object()) {
    return InternalError("watch event without type/object " + Excerpt(line));
  }
  const std::string& type = type_it->get_ref<const std::string&>();
  WatchEvent event;
  if (type == "ERROR") {
    event.type = WatchEvent::Type::kError;
    event.error = StatusFromApiObject(*object_it, 0);
    if (event.error.ok()) event.error = InternalError("watch ERROR event");
    return event;
  }
  if (type == "ADDED") {
    event.type = WatchEvent::Type::kAdded;
  } else if (type == "MODIFIED") {
    event.type = WatchEvent::Type::kModified;
  } else if (type == "DELETED") {
    event.type = WatchEvent::Type::kDeleted;
  } else if (type == "BOOKMARK") {
    event.type = WatchEvent::Type::kBookmark;
  } else {
    return InternalError("unknown watch event type \"" + Printable(type, 40) +
                         "\"");
  }
  auto pod = PodFromJsonValue(*object_it, "watch event object");
  if (!pod.ok()) return pod.status();
  event.pod = std::move(pod).value();
  return event;
}

Status WatchDecoder::DecodeLine(std::string_view line,
                                std::vector<WatchEvent>* events) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (Trim(line).empty()) return OkStatus();  // Keep-alive blank lines.
  auto event = ParseWatchEvent(line);
  if (!event.ok()) return event.status();
  events->push_back(std::move(event).value());
  return OkStatus();
}

Status WatchDecoder::Feed(std::string_view bytes,
                          std::vector<WatchEvent>* events) {
  if (!error_.ok()) return error_;
  while (!bytes.empty()) {
    size_t nl = bytes.find('\n');
    size_t take = nl == std::string_view::npos ? bytes.size() : nl;
    // Check before copying so a huge chunk never grows the buffer.
    if (tail_.size() + take > max_event_bytes_) {
      tail_.clear();
      tail_.shrink_to_fit();
      error_ = TooLargeError("watch event larger than " +
                             std::to_string(max_event_bytes_) + " bytes");
      return error_;
    }
    if (nl == std::string_view::npos) {
      tail_.append(bytes);
      return OkStatus();
    }
    Status s;
    if (tail_.empty()) {
      s = DecodeLine(bytes.substr(0, nl), events);
    } else {
      tail_.append(bytes.substr(0, nl));
      s = DecodeLine(tail_, events);
      tail_.clear();
    }
    if (!s.ok()) {
      error_ = s;
      return error_;
    }
    bytes.remove_prefix(nl + 1);
  }
  return OkStatus();
}

Status WatchDecoder::Finish(std::vector<WatchEvent>* events) {
  if (!error_.ok()) return error_;
  std::string last = std::move(tail_);
  tail_.clear();
  Status s = DecodeLine(last, events);
  if (!s.ok()) error_ = s;
  return s;
}

}  // namespace k8s_agent::kube
