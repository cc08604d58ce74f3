// SPDX-License-Identifier: Apache-2.0
#include "plugin/inject/yaml_document.h"

#include <yaml-cpp/eventhandler.h>

#include <exception>
#include <sstream>
#include <string>

namespace k8s_agent::inject {
namespace {

// Counts the documents yaml-cpp's parser completes, so a syntax error can
// be placed in its document: YAML::LoadAll only says the line.
class DocumentCounter : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// 1-based index of the document where parsing `text` fails.
int FailingDocument(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentCounter counter;
  int done = 0;
  try {
    while (parser.HandleNextDocument(counter)) ++done;
  } catch (const YAML::Exception&) {
  }
  return done + 1;
}

// yaml-cpp writes a literal block as "|" and the lines indented, with no
// indentation or chomping indicator: only text that reads back the same
// that way goes out as one (one final newline, no leading space, no
// trailing blanks, nothing but printable characters).
bool LiteralSafe(const std::string& s) {
  if (s.size() < 2 || s.back() != '\n' || s[s.size() - 2] == '\n') {
    return false;
  }
  if (s.front() == ' ' || s.front() == '\n') return false;
  char prev = '\0';
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n' && (prev == ' ' || prev == '\t')) return false;
    if (u < 0x20 && c != '\n') return false;
    if (u == 0x7f) return false;
    prev = c;
  }
  return s.find('\n') != s.size() - 1;  // Multi-line only.
}

void Emit(YAML::Emitter& out, const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      // Empty ones as "{}" always: yaml-cpp reads them back as flow.
      if (node.Style() == YAML::EmitterStyle::Flow || node.size() == 0) {
        out << YAML::Flow;
      }
      out << YAML::BeginMap;
      for (auto it = node.begin(); it != node.end(); ++it) {
        out << YAML::Key;
        Emit(out, it->first);
        out << YAML::Value;
        Emit(out, it->second);
      }
      out << YAML::EndMap;
      break;
    case YAML::NodeType::Sequence:
      if (node.Style() == YAML::EmitterStyle::Flow || node.size() == 0) {
        out << YAML::Flow;
      }
      out << YAML::BeginSeq;
      for (const YAML::Node& item : node) Emit(out, item);
      out << YAML::EndSeq;
      break;
    case YAML::NodeType::Scalar: {
      const std::string& value = node.Scalar();
      const std::string& tag = node.Tag();
      if (tag == "!") {
        // Quoted in the input: a string whatever it looks like.
        if (LiteralSafe(value)) {
          out << YAML::Literal << value;
        } else {
          out << YAML::DoubleQuoted << value;
        }
      } else if (tag.empty() || tag == "?") {
        out << value;
      } else {
        out << YAML::VerbatimTag(tag) << value;
      }
      break;
    }
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      out << YAML::Null;
      break;
  }
}

}  // namespace

StatusOr<std::vector<YAML::Node>> ParseDocuments(const std::string& text,
                                                 const std::string& source) {
  try {
    return YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(
        source + ": document " + std::to_string(FailingDocument(text)) +
        ": line " + std::to_string(e.mark.line + 1) + ", column " +
        std::to_string(e.mark.column + 1) + ": " + e.msg +
        " (not valid YAML; fix the manifest)");
  }
}

std::string EmitDocument(const YAML::Node& node) {
  YAML::Emitter out;
  out.SetIndent(2);
  Emit(out, node);
  std::string text = out.c_str();
  if (text.empty() || text.back() != '\n') text += '\n';
  return text;
}

}  // namespace k8s_agent::inject
