// SPDX-License-Identifier: Apache-2.0
// A pre-parse guard against deeply nested JSON from the API server.

#include "plugin/kube/json_depth.h"

#include <string>

namespace k8s_agent::kube {

Status CheckJsonDepth(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // The escaped character cannot end the string.
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > max_depth) {
          return InternalError("JSON nested deeper than " +
                               std::to_string(max_depth) + " levels (at byte " +
                               std::to_string(i) + ")");
        }
        break;
      case ']':
      case '}':
        // Unbalanced closers are the parser's business; never go negative
        // so that "]]][[[" cannot buy extra depth.
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return OkStatus();
}

}  // namespace k8s_agent::kube
