#include "program_platform.hpp"

#include <filesystem>

#include "platforms/katib/metrics_file.hpp"
#include "platforms/sagemaker/training_environment.hpp"
#include "platforms/wandb/program_environment.hpp"
#include "platforms/wandb/run_log.hpp"

namespace hpo {

namespace {

namespace fs = std::filesystem;

// Rank R's SageMaker base folder: trials/ID/sagemaker on rank 0 (its model/ is the trial's model),
// trials/ID/sagemaker-algo-N on the others (host algo-N, N = R + 1).
std::string SageMakerBaseDir(const std::string& trial_dir, int rank_in_group) {
  const std::string name =
      rank_in_group == 0 ? "sagemaker" : "sagemaker-algo-" + std::to_string(rank_in_group + 1);
  return (fs::path(trial_dir) / name).string();
}

// A training job's name as SageMaker makes it from its tuning job's: JOB-NNN.
std::string SageMakerJobName(const SageMakerSpec& spec, int64_t trial_id) {
  std::string number = std::to_string(trial_id);
  if (number.size() < 3) number.insert(0, 3 - number.size(), '0');
  return (spec.job_name.empty() ? std::string("hpo") : spec.job_name) + "-" + number;
}

Status PrepareSageMaker(const SweepConfig& config, const ProgramPlatformInput& input,
                        ProgramPlatform* platform) {
  const SageMakerSpec& spec = *config.command.sagemaker;
  SageMakerTrialInput trial;
  trial.base_dir = SageMakerBaseDir(input.trial_dir, input.rank_in_group);
  trial.job_name = SageMakerJobName(spec, input.trial_id);
  trial.program = config.command.program;
  for (const CommandArg& arg : input.params) {
    trial.hyperparameters.emplace_back(arg.name, PythonStr(arg));
  }
  for (const auto& [name, folder] : spec.channels) trial.channels[name] = folder;
  trial.hosts = input.group_size;
  trial.current_host = input.rank_in_group;
  trial.num_gpus = input.has_gpu ? 1 : 0;
  trial.num_cpus = input.threads;
  HPO_RETURN_IF_ERROR(PrepareSageMakerTrial(trial, &platform->environment));
  if (input.rank_in_group == 0) platform->model_dir = TrialModelDir(config, input.trial_dir);
  platform->working_dir = fs::path(config.command.program).parent_path().string();
  return Status::Ok();
}

// Replaces every occurrence of `from` in `text` by `to`.
std::string PlatformReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

}  // namespace

std::string TrialMetricsFile(const MetricsFileSpec& spec, const std::string& trial_dir) {
  return (fs::path(trial_dir) / fs::path(spec.path).filename()).string();
}

std::string TrialModelDir(const SweepConfig& config, const std::string& trial_dir) {
  if (!config.command.sagemaker) return "";
  return (fs::path(SageMakerBaseDir(trial_dir, 0)) / "model").string();
}

Status PrepareProgramPlatform(const SweepConfig& config, const ProgramPlatformInput& input,
                              const std::vector<std::string>& inherited,
                              std::vector<std::string>* argv, ProgramPlatform* platform) {
  const std::string& objective = config.sweep.metric.name;
  WandbTrialInput wandb{input.trial_dir,     input.trial_id,    input.attempt,
                        input.rank_in_group, config.sweep.name, config.sweep.project,
                        config.sweep.entity, input.params};
  WandbRunPlace run;
  HPO_RETURN_IF_ERROR(PrepareWandbTrial(wandb, inherited, &platform->environment, &run));
  if (input.rank_in_group == 0) {
    platform->metric_sources.push_back(
        std::make_unique<WandbRunLog>(run.dir, run.run_id, objective));
  }
  if (config.command.sagemaker) HPO_RETURN_IF_ERROR(PrepareSageMaker(config, input, platform));
  std::string metrics_file;
  if (const std::optional<MetricsFileSpec>& spec = config.command.metrics_file) {
    metrics_file = TrialMetricsFile(*spec, input.trial_dir);
    for (std::string& element : *argv)
      element = PlatformReplaceAll(element, spec->path, metrics_file);
    platform->output_has_no_metrics = true;
    platform->metric_sources.clear();
    if (input.rank_in_group == 0) {
      std::error_code error;
      fs::remove(metrics_file, error);  // an earlier attempt's: its steps are in steps.tsv
      auto file = std::make_unique<KatibMetricsFile>();
      HPO_RETURN_IF_ERROR(KatibMetricsFile::Create(
          metrics_file,
          spec->json ? KatibMetricsFile::Format::kJson : KatibMetricsFile::Format::kText,
          spec->filters, objective, file.get()));
      platform->metric_sources.push_back(std::move(file));
    }
  }
  for (const auto& [name, value] : config.command.environment) {
    std::string expanded = ExpandParamReferences(value, input.params);
    if (!metrics_file.empty()) {
      expanded = PlatformReplaceAll(expanded, config.command.metrics_file->path, metrics_file);
    }
    platform->environment.emplace_back(name, expanded);
  }
  return Status::Ok();
}

}  // namespace hpo
