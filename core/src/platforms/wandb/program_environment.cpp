#include "program_environment.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace hpo {

namespace {

namespace fs = std::filesystem;

bool WandbInherits(const std::vector<std::string>& inherited, const std::string& name) {
  const std::string prefix = name + "=";
  for (const std::string& entry : inherited) {
    if (entry.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// Whether ~/.netrc holds W&B's login (what `wandb login` writes), as wandb's apikey.py looks.
bool WandbNetrcHasKey() {
  const char* home = std::getenv("HOME");
  if (home == nullptr) return false;
  std::ifstream in(fs::path(home) / ".netrc");
  std::stringstream text;
  text << in.rdbuf();
  return text.str().find("api.wandb.ai") != std::string::npos;
}

// {"lr": {"value": 0.01}, ...}: the agent's YAML, written as JSON (which YAML reads).
std::string WandbParamFileText(const std::vector<CommandArg>& params) {
  std::string text = "{";
  for (size_t i = 0; i < params.size(); ++i) {
    if (i > 0) text += ", ";
    text += PythonJsonString(params[i].name) + ": {\"value\": " + PythonJsonValue(params[i]) + "}";
  }
  return text + "}\n";
}

}  // namespace

std::string WandbSweepId(const std::string& sweep_name) {
  if (sweep_name.empty()) return "hpo";
  std::string id = "hpo-" + sweep_name;
  for (char& c : id) {
    const bool kept = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-';
    if (!kept) c = '-';
  }
  return id;
}

Status PrepareWandbTrial(const WandbTrialInput& input, const std::vector<std::string>& inherited,
                         std::vector<std::pair<std::string, std::string>>* environment,
                         WandbRunPlace* place) {
  const std::string sweep_id = WandbSweepId(input.sweep_name);
  place->run_id = "trial-" + std::to_string(input.trial_id);
  if (input.attempt > 0) place->run_id += "-r" + std::to_string(input.attempt);
  place->dir =
      input.rank_in_group == 0
          ? input.trial_dir
          : (fs::path(input.trial_dir) / ("wandb-rank-" + std::to_string(input.rank_in_group)))
                .string();
  const fs::path param_file = fs::path(place->dir) / "wandb" / ("sweep-" + sweep_id) /
                              ("config-" + place->run_id + ".yaml");
  std::error_code error;
  fs::create_directories(param_file.parent_path(), error);
  std::ofstream out(param_file, std::ios::trunc);
  out << WandbParamFileText(input.params);
  out.close();
  if (error || !out) {
    return Status::Failure("cannot write W&B's parameter file " + param_file.string() +
                           (error ? ": " + error.message() : std::string()));
  }
  environment->emplace_back("WANDB_SWEEP_ID", sweep_id);
  environment->emplace_back("WANDB_RUN_ID", place->run_id);
  environment->emplace_back("WANDB_SWEEP_PARAM_PATH", param_file.string());
  environment->emplace_back("WANDB_DIR", place->dir);
  if (!input.project.empty() && !WandbInherits(inherited, "WANDB_PROJECT")) {
    environment->emplace_back("WANDB_PROJECT", input.project);
  }
  if (!input.entity.empty() && !WandbInherits(inherited, "WANDB_ENTITY")) {
    environment->emplace_back("WANDB_ENTITY", input.entity);
  }
  // wandb-core writes the transaction log every 15 s by default: every half second keeps early
  // stopping on what the program logs.
  if (!WandbInherits(inherited, "WANDB__TRANSACTION_LOG_FLUSH_INTERVAL")) {
    environment->emplace_back("WANDB__TRANSACTION_LOG_FLUSH_INTERVAL", "0.5");
  }
  const bool has_key = WandbInherits(inherited, "WANDB_API_KEY") || WandbNetrcHasKey();
  if (!WandbInherits(inherited, "WANDB_MODE") && !has_key) {
    environment->emplace_back("WANDB_MODE", "offline");
  }
  return Status::Ok();
}

}  // namespace hpo
