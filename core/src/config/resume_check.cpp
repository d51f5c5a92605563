// CheckSameSweep: whether a config may continue a study begun with another config text.
#include <set>
#include <string>

#include <yaml-cpp/yaml.h>

#include "hpo/config.hpp"

namespace hpo {

namespace {

// Keys that may change between runs of one study: how much to run and on what resources.
const std::set<std::string>& ResumableKeys() {
  static const std::set<std::string> keys = {"sweep.run_cap",
                                             "sweep.name",
                                             "sweep.description",
                                             "output",
                                             "data",
                                             "ranks_per_trial",
                                             "threads_per_rank",
                                             "time_budget_s",
                                             "max_failed_trials",
                                             "trial_retries",
                                             "checkpoint",
                                             "trials_per_gpu",
                                             "ddp",
                                             "run_cap",
                                             "trial_timeout_s",
                                             "terminate_grace_s",
                                             "peer_timeout_s"};
  return keys;
}

std::string Show(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "absent";
  YAML::Emitter out;
  out << YAML::Flow << node;
  std::string text = out.c_str();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

// The first key path under `path` where `a` and `b` differ; empty when they are the same.
std::string FirstDifference(const YAML::Node& a, const YAML::Node& b, const std::string& path) {
  if (ResumableKeys().count(path) != 0) return "";
  const bool a_map = a.IsDefined() && a.IsMap();
  const bool b_map = b.IsDefined() && b.IsMap();
  if (a_map && b_map) {
    std::set<std::string> keys;
    for (const auto& entry : a) keys.insert(entry.first.as<std::string>());
    for (const auto& entry : b) keys.insert(entry.first.as<std::string>());
    for (const std::string& key : keys) {
      const std::string child = path.empty() ? key : path + "." + key;
      std::string found = FirstDifference(a[key], b[key], child);
      if (!found.empty()) return found;
    }
    return "";
  }
  const bool a_seq = a.IsDefined() && a.IsSequence();
  const bool b_seq = b.IsDefined() && b.IsSequence();
  if (a_seq && b_seq && a.size() == b.size()) {
    for (size_t i = 0; i < a.size(); ++i) {
      std::string found = FirstDifference(a[i], b[i], path + "[" + std::to_string(i) + "]");
      if (!found.empty()) return found;
    }
    return "";
  }
  if (!a_map && !b_map && !a_seq && !b_seq && Show(a) == Show(b)) return "";
  return (path.empty() ? std::string("the config") : path) + " (study: " + Show(a) +
         ", now: " + Show(b) + ")";
}

}  // namespace

Status CheckSameSweep(const std::string& study_config_text, const SweepConfig& config) {
  YAML::Node before;
  YAML::Node now;
  try {
    before = YAML::Load(study_config_text);
    now = YAML::Load(config.text);
  } catch (const YAML::Exception& error) {
    return Status::BadInput("the study's config does not parse: " + error.msg);
  }
  const std::string difference = FirstDifference(before, now, "");
  if (difference.empty()) return Status::Ok();
  return Status::BadInput(
      config.path + ": the study was begun with another sweep: " + difference +
      "; only run_cap, the budgets, retries, checkpointing, output, data and "
      "the ranks (and ddp, trial_timeout_s, terminate_grace_s) may change on resume");
}

}  // namespace hpo
