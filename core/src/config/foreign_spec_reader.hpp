// Private to hpo_core: reading a tuning spec written for another system (a Katib Experiment, a
// SageMaker tuning job) key by key. Every error names the file, line and dotted key; keys that
// only place the work on a cluster are collected for one warning. Used by one thread.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "hpo/status.hpp"
#include "yaml_fields.hpp"

namespace hpo {

// Where a key of the translated hpo config came from in the spec: `hpo_key` (dotted, e.g.
// sweep.parameters.lr.min) was written from the spec's `spec_path` at `line`.
struct TranslatedKeyOrigin {
  std::string hpo_key;
  int line = 1;
  std::string spec_path;
};

// What a translation gives beside the hpo config's text: the keys that only place the work on a
// cluster ("KEY (line N)[: why]", for one warning) and where the config's keys came from.
struct TranslationNotes {
  std::vector<std::string> ignored;
  std::vector<TranslatedKeyOrigin> origins;
};

// Fail and the readers return BadInput "FILE:LINE: PATH: WHAT"; Ignore appends
// "PATH (line N)[: why]" to notes->ignored and Origin a key's origin to notes->origins.
class ForeignSpecReader {
 public:
  ForeignSpecReader(const config_internal::ErrorFormatter& errors, TranslationNotes* notes)
      : errors_(errors), notes_(notes) {}

  Status Fail(const YAML::Node& node, const std::string& path, const std::string& what) const {
    return errors_.At(std::max(1, config_internal::LineOf(node)), path, what);
  }
  void Ignore(const YAML::Node& node, const std::string& path, const std::string& why = "") {
    notes_->ignored.push_back(path + " (line " +
                              std::to_string(std::max(1, config_internal::LineOf(node))) + ")" +
                              (why.empty() ? "" : ": " + why));
  }
  // Records that the hpo config's `hpo_key` is written from `node`, the spec's `spec_path`: an
  // error the hpo config's parser finds at that key (or below it) then names the spec's line.
  void Origin(const std::string& hpo_key, const YAML::Node& node, const std::string& spec_path) {
    notes_->origins.push_back({hpo_key, std::max(1, config_internal::LineOf(node)), spec_path});
  }

  // The keys of the mapping `node` at `path`, each known, ignored (listed) or an error.
  Status Keys(const YAML::Node& node, const std::string& path, const std::set<std::string>& known,
              const std::set<std::string>& ignored = {}) {
    if (!node.IsMap()) return Fail(node, path, "must be a mapping");
    for (const auto& entry : node) {
      const std::string key = entry.first.Scalar();
      const std::string at = path.empty() ? key : path + "." + key;
      if (known.count(key) != 0) continue;
      if (ignored.count(key) != 0) {
        Ignore(entry.first, at);
        continue;
      }
      std::string keys;
      for (const std::string& name : known) keys += (keys.empty() ? "" : ", ") + name;
      return Fail(entry.first, at, "not a key hpo can honour here (it reads " + keys + ")");
    }
    return Status::Ok();
  }

  Status Required(const YAML::Node& parent, const std::string& path, const std::string& key,
                  YAML::Node* out) const {
    if (!parent.IsMap()) return Fail(parent, path, "must be a mapping");
    const YAML::Node node = parent[key];
    if (!node) return Fail(parent, path, "missing `" + key + "`");
    *out = node;
    return Status::Ok();
  }

  // Required, then String: the text of `key` of `parent`, and its node for later messages.
  Status RequiredString(const YAML::Node& parent, const std::string& path, const std::string& key,
                        YAML::Node* node, std::string* out) const {
    HPO_RETURN_IF_ERROR(Required(parent, path, key, node));
    return String(*node, path.empty() ? key : path + "." + key, out);
  }
  Status String(const YAML::Node& node, const std::string& path, std::string* out) const {
    if (!node.IsScalar()) return Fail(node, path, "must be a string");
    *out = node.Scalar();
    return Status::Ok();
  }
  // Katib writes numbers as strings ("0.01"); either form is read.
  Status Number(const YAML::Node& node, const std::string& path, double* out) const {
    if (!node.IsScalar() || !config_internal::ParseNumberScalar(node.Scalar(), out) ||
        !std::isfinite(*out)) {
      return Fail(node, path, "must be a number, got " + config_internal::DescribeValue(node));
    }
    return Status::Ok();
  }
  // A number checked by Number, kept as written ("0.01", not 0.01000000000000000021).
  Status NumberText(const YAML::Node& node, const std::string& path, std::string* out) const {
    double ignored = 0.0;
    HPO_RETURN_IF_ERROR(Number(node, path, &ignored));
    *out = node.Scalar();
    return Status::Ok();
  }
  Status Integer(const YAML::Node& node, const std::string& path, int64_t* out) const {
    if (!node.IsScalar() || !config_internal::ParseIntegerScalar(node.Scalar(), out)) {
      return Fail(node, path, "must be an integer, got " + config_internal::DescribeValue(node));
    }
    return Status::Ok();
  }

 private:
  const config_internal::ErrorFormatter& errors_;
  TranslationNotes* notes_;
};

// The hpo config of a translated spec as YAML text: `header` (a comment line), then `sweep:`,
// then the keys of `config` beside it.
inline std::string EmitHpoConfig(const std::string& header, const YAML::Node& sweep,
                                 const YAML::Node& config) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "sweep" << YAML::Value << sweep;
  for (const auto& entry : config) out << YAML::Key << entry.first << YAML::Value << entry.second;
  out << YAML::EndMap;
  return "# " + header + "\n" + out.c_str() + "\n";
}

}  // namespace hpo
