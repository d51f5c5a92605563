// RenderSbatch: #SBATCH lines from the options, the defaults the job body reads, then the body
// itself (templates/sbatch_body.sh), which handles arguments, the launch, signals and requeue.
#include <regex>
#include <string>
#include <utility>

#include "render/render.hpp"
#include "render_names.hpp"

namespace hpo {
namespace {

using render_internal::CheckPositive;
using render_internal::CheckRankCount;
using render_internal::DefaultJobName;
using render_internal::ResolveRanksPerNode;

// Slurm's time formats: "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S" (sbatch(1), --time).
bool IsSlurmTime(const std::string& time) {
  static const std::regex kTime(
      R"(^(\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d{1,2}|\d+-\d{1,2}:\d{1,2}|)"
      R"(\d+-\d{1,2}:\d{1,2}:\d{1,2})$)");
  return std::regex_match(time, kTime);
}

// Job, partition and account names: no white space, quotes or shell characters.
bool IsPlainWord(const std::string& word) {
  static const std::regex kWord(R"(^[A-Za-z0-9._+-]+$)");
  return std::regex_match(word, kWord);
}

// A value the script puts in single quotes.
Status CheckQuotable(const std::string& option, const std::string& value) {
  if (value.find('\'') != std::string::npos || value.find('\n') != std::string::npos) {
    return Status::BadInput(option + " '" + value + "' must not hold a quote or a line break");
  }
  return Status::Ok();
}

// What the script's directives and defaults hold, from the options or, where they leave it to
// the config, from the config.
struct SbatchJob {
  std::string name;
  int64_t tasks_per_node = 0;
  int64_t cpus_per_task = 0;
  std::string config_path;
  std::string output_dir;
};

// The job's name and shape (nodes, GPUs and tasks per node, CPUs per task); BadInput when one is
// invalid or the ranks do not suit the config.
Status ResolveJobShape(const SweepConfig& config, const SbatchOptions& options, SbatchJob* job) {
  job->name = options.job_name.empty() ? DefaultJobName(config) : options.job_name;
  if (!IsPlainWord(job->name)) {
    return Status::BadInput("--job-name '" + job->name +
                            "' must be letters, digits and . _ + - only");
  }
  HPO_RETURN_IF_ERROR(CheckPositive("--nodes", options.nodes));
  if (options.gpus_per_node < 0) {
    return Status::BadInput("--gpus-per-node must be 0 or more, not " +
                            std::to_string(options.gpus_per_node));
  }
  HPO_RETURN_IF_ERROR(ResolveRanksPerNode(config, options.ntasks_per_node, options.gpus_per_node,
                                          {"--ntasks-per-node", "--gpus-per-node", "node"},
                                          &job->tasks_per_node));
  HPO_RETURN_IF_ERROR(CheckPositive("--ntasks-per-node", job->tasks_per_node));
  HPO_RETURN_IF_ERROR(CheckRankCount(config, options.nodes * job->tasks_per_node,
                                     "--nodes " + std::to_string(options.nodes) + " x " +
                                         std::to_string(job->tasks_per_node) + " tasks per node"));
  job->cpus_per_task =
      options.cpus_per_task > 0 ? options.cpus_per_task : config.execution.threads_per_rank;
  return Status::Ok();
}

// The time limit, partition, account, array spec, launcher and the preemption signal's lead;
// BadInput naming the first that is invalid.
Status CheckSchedulingOptions(const SweepConfig& config, const SbatchOptions& options) {
  if (!IsSlurmTime(options.time)) {
    return Status::BadInput("--time '" + options.time +
                            "' is not a Slurm time (MINUTES, HH:MM:SS or D-HH:MM:SS)");
  }
  if (!options.partition.empty() && !IsPlainWord(options.partition)) {
    return Status::BadInput("--partition '" + options.partition + "' is not a partition name");
  }
  if (!options.account.empty() && !IsPlainWord(options.account)) {
    return Status::BadInput("--account '" + options.account + "' is not an account name");
  }
  static const std::regex kArray(R"(^[0-9]+([-:,][0-9]+)*(%[0-9]+)?$)");
  if (!options.array.empty() && !std::regex_match(options.array, kArray)) {
    return Status::BadInput("--array '" + options.array +
                            "' is not an array spec (e.g. 0-3, 1,5,7 or 0-15%4)");
  }
  if (options.launcher != "mpirun" && options.launcher != "srun") {
    return Status::BadInput("--launcher must be mpirun or srun, not '" + options.launcher + "'");
  }
  if (options.preemptible && options.signal_lead_s <= config.checkpoint.grace_period_s) {
    return Status::BadInput("--signal-lead " + std::to_string(options.signal_lead_s) +
                            " s must exceed checkpoint.grace_period_s " +
                            std::to_string(static_cast<int64_t>(config.checkpoint.grace_period_s)) +
                            " s in " + config.path +
                            " (the job must have time to checkpoint after the signal)");
  }
  return Status::Ok();
}

// The config and output folder the script runs without arguments; BadInput when one cannot be
// single-quoted.
Status ResolveDefaultPaths(const SweepConfig& config, const SbatchOptions& options,
                           SbatchJob* job) {
  job->config_path = options.config_path.empty() ? config.path : options.config_path;
  job->output_dir = options.output_dir.empty() ? config.execution.output : options.output_dir;
  HPO_RETURN_IF_ERROR(CheckQuotable("--config", job->config_path));
  return CheckQuotable("--output-dir", job->output_dir);
}

// The shebang and the comments that say how the script was rendered and how to run it.
std::string HeaderComments(const SbatchOptions& options) {
  std::string text = "#!/bin/bash\n";
  if (!options.command_line.empty()) text += "# Rendered by: " + options.command_line + "\n";
  text +=
      "# Runs one hpo-mpi sweep in one Slurm job. Usage: sbatch THIS_SCRIPT [CONFIG [OUTPUT]]\n"
      "# (or HPO_CONFIG / HPO_OUTPUT in the environment); without them, the defaults below.\n";
  if (!options.array.empty()) {
    text +=
        "# Job array: task I runs the I-th CONFIG argument (or the one config) into its own\n"
        "# study, OUTPUT/task_I.\n";
  }
  if (options.preemptible) {
    text +=
        "# Preemptible: USR1 (Slurm's warning before the time limit, or scancel --signal=USR1\n"
        "# --batch) makes the sweep checkpoint and exit 3; the job then requeues itself and\n"
        "# resumes the study.\n";
  }
  return text;
}

// The #SBATCH lines.
std::string Directives(const SbatchOptions& options, const SbatchJob& job) {
  std::string text;
  const auto directive = [&text](const std::string& line) { text += "#SBATCH " + line + "\n"; };
  directive("--job-name=" + job.name);
  directive("--nodes=" + std::to_string(options.nodes));
  directive("--ntasks-per-node=" + std::to_string(job.tasks_per_node));
  directive("--cpus-per-task=" + std::to_string(job.cpus_per_task));
  if (options.gpus_per_node > 0)
    directive("--gpus-per-node=" + std::to_string(options.gpus_per_node));
  if (options.exclusive) directive("--exclusive");
  directive("--time=" + options.time);
  if (!options.partition.empty()) directive("--partition=" + options.partition);
  if (!options.account.empty()) directive("--account=" + options.account);
  if (!options.array.empty()) {
    directive("--array=" + options.array);
    directive("--output=%x-%A_%a.out");
  } else {
    directive("--output=%x-%j.out");
  }
  if (options.preemptible) {
    directive("--requeue");
    directive("--signal=B:USR1@" + std::to_string(options.signal_lead_s));
    directive("--open-mode=append");
  }
  return text;
}

// The shell variables the job body reads its defaults from, after a blank line.
std::string BodyDefaults(const SbatchOptions& options, const SbatchJob& job) {
  std::string text = "\n";
  text += "HPO_DEFAULT_CONFIG='" + job.config_path + "'\n";
  text += "HPO_DEFAULT_OUTPUT='" + job.output_dir + "'\n";
  text += "HPO_LAUNCHER='" + options.launcher + "'\n";
  text += std::string("HPO_PREEMPTIBLE=") + (options.preemptible ? "1" : "0") + "\n";
  return text;
}

}  // namespace

Status RenderSbatch(const SweepConfig& config, const SbatchOptions& options, std::string* script) {
  SbatchJob job;
  HPO_RETURN_IF_ERROR(ResolveJobShape(config, options, &job));
  HPO_RETURN_IF_ERROR(CheckSchedulingOptions(config, options));
  HPO_RETURN_IF_ERROR(ResolveDefaultPaths(config, options, &job));
  *script = HeaderComments(options) + Directives(options, job) + BodyDefaults(options, job) +
            render_internal::kSbatchBody;
  return Status::Ok();
}

}  // namespace hpo
