// Private to hpo_core: SageMaker script mode's training environment for one rank of a command
// trial, as the SageMaker training toolkit gives it to a training script (PyPI sagemaker-training
// 5.1.4, aws/sagemaker-training-toolkit: src/sagemaker_training/environment.py Environment and
// to_env_vars, mapping.py to_env_vars and to_cmd_args, params.py). A script written for SageMaker
// (`os.environ["SM_MODEL_DIR"]`, `SM_CHANNEL_TRAIN`, `json.loads(os.environ["SM_HOSTS"])`, or
// `sagemaker_training.environment.Environment()`) runs unchanged. Pure functions of their
// arguments plus the files they write; no MPI, no torch; thread-safe on different base folders.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hpo/status.hpp"

namespace hpo {

// Everything the runner knows about one rank of one trial. A plain value; the caller fills it.
//   base_dir: this rank's base folder, SageMaker's /opt/ml (the runner passes
//     OUTPUT/trials/ID/sagemaker for rank 0, OUTPUT/trials/ID/sagemaker-algo-N for the rank of host
//     algo-N); created when missing. Relative paths are made absolute.
//   job_name: the training job's name (TRAINING_JOB_NAME, sagemaker_job_name).
//   program: the entry point (sagemaker_program) as an absolute path; the script's file name
//     becomes sagemaker_program and its folder sagemaker_submit_directory (SM_USER_ENTRY_POINT,
//     SM_MODULE_NAME, SM_MODULE_DIR) unless `hyperparameters` holds those names itself.
//   hyperparameters: name -> value as the training job's HyperParameters map has it (text), in
//     order, the trial's sampled values and the static ones. A value that is JSON ("10", "0.01",
//     "true", "[1, 2]", "\"adam\"") reaches the script as that JSON value, any other text as a
//     string, as the toolkit's read_hyperparameters json-decodes each value when it can. Names
//     starting with "sagemaker_" (and _tuning_objective_metric) are SageMaker's own settings:
//     they stay out of SM_HPS, SM_HP_* and SM_USER_ARGS.
//   channels: channel name -> an existing local folder; input/data/NAME links to it. A name must
//     be a single path component.
//   hosts, current_host: the trial group's ranks are hosts algo-1..algo-N; this rank is
//     algo-(current_host+1). algo-1 is the master.
//   num_gpus, num_cpus: what this rank may use (SM_NUM_GPUS, SM_NUM_CPUS).
//   network_interface_name: the interface the group's hosts reach each other over
//     (SM_NETWORK_INTERFACE_NAME; scripts set NCCL_SOCKET_IFNAME from it); SageMaker's default.
struct SageMakerTrialInput {
  std::string base_dir;
  std::string job_name;
  std::string program;
  std::vector<std::pair<std::string, std::string>> hyperparameters;
  std::map<std::string, std::string> channels;
  int hosts = 1;
  int current_host = 0;
  int num_gpus = 0;
  int num_cpus = 1;
  std::string network_interface_name = "eth0";
};

// Writes the toolkit's tree under input.base_dir, as SageMaker lays out /opt/ml in a training
// container: input/config/hyperparameters.json (each value a JSON string holding the value's
// text), resourceconfig.json (current_host, current_instance_type "local", current_group_name
// "homogeneousCluster", hosts, instance_groups, network_interface_name), inputdataconfig.json
// (per channel TrainingInputMode File, S3DistributionType FullyReplicated, RecordWrapperType
// None), input/data/CHANNEL (a symlink to the channel's folder, replacing an earlier link),
// model/, output/data/, output/intermediate/ and code/. Replaces `environment` with the variables
// (name, value; sorted by name) that the toolkit's runner gives a script-mode program:
// SAGEMAKER_BASE_DIR (so that `Environment()` inside the program reads these files),
// TRAINING_JOB_NAME, CURRENT_HOST, SAGEMAKER_JOB_NAME and every SM_* of
// Environment.to_env_vars() with the toolkit's rendering (strings as they are, anything else as
// compact JSON with sorted keys and \u escapes): SM_MODEL_DIR, SM_CHANNELS ["train"],
// SM_CHANNEL_<NAME>, SM_HOSTS ["algo-1","algo-2"], SM_CURRENT_HOST, SM_HPS, SM_HP_<NAME>,
// SM_USER_ARGS, SM_NUM_GPUS, SM_NUM_CPUS, SM_TRAINING_ENV, ... (NAME upper-cased in ASCII; Python's
// str.upper() would also map other scripts' letters). The toolkit's values for what it would
// probe itself: no Neuron cores, smddprun absent, no SAGEMAKER_TRAINING_MODULE.
// BadInput for hosts < 1, current_host outside [0, hosts), a channel name that is not one path
// component, a value that would put a NUL character in a variable; Failure naming the path when a
// folder, file or link cannot be made.
Status PrepareSageMakerTrial(const SageMakerTrialInput& input,
                             std::vector<std::pair<std::string, std::string>>* environment);

// The script's arguments as the toolkit passes them (Environment.to_cmd_args, mapping.to_cmd_args;
// also SM_USER_ARGS): the hyperparameters other than SageMaker's own, sorted by name, each as
// "--name" ("-n" for a one-character name) then its decoded value as Python's str() writes it
// ("0.001", "1e-05", "True", "adam", "[1, 'a']"; a mapping as "k=v,k2=v2").
std::vector<std::string> SageMakerUserArgs(
    const std::vector<std::pair<std::string, std::string>>& hyperparameters);

}  // namespace hpo
