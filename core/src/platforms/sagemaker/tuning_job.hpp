// Private to hpo_core: a SageMaker tuning job (the JSON of a CreateHyperParameterTuningJob request,
// as `aws sagemaker create-hyper-parameter-tuning-job --cli-input-json` takes it), read as the
// equivalent hpo config, so that `hpo sweep --config tuning-job.json` runs it as it is.
// docs/config.md ("A SageMaker tuning job as it is") lists the mapping.
#pragma once

#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "config/foreign_spec_reader.hpp"
#include "config/yaml_fields.hpp"
#include "hpo/status.hpp"

namespace hpo {

// Whether `root` is a SageMaker tuning job: a mapping with HyperParameterTuningJobConfig.
bool IsSageMakerTuningJob(const YAML::Node& root);

// The hpo config (YAML text, a comment naming `path` first) that runs the tuning job `root`, its
// training jobs as command trials of SageMaker script mode on this job's ranks:
//   HyperParameterTuningJobObjective -> sweep.metric; Strategy Bayesian -> bayes with the GP,
//     Random -> random, Grid -> grid, Hyperband -> random with early_terminate hyperband
//     (min_iter MinResource, eta 3, as SageMaker's); RandomSeed -> seed;
//   ResourceLimits MaxNumberOfTrainingJobs -> run_cap, MaxRuntimeInSeconds -> time_budget_s;
//   TuningJobCompletionCriteria TargetObjectiveMetricValue -> sweep.metric.target;
//   TrainingJobEarlyStoppingType Auto -> median_stopping (SageMaker's rule is the median rule);
//   ParameterRanges -> sweep.parameters (Continuous: uniform, log_uniform_values for
//     Logarithmic; Integer: int_uniform, q_log_uniform_values with q 1 for Logarithmic;
//     Categorical: values); StaticHyperParameters -> constant parameters;
//   TrainingJobDefinition: StaticHyperParameters sagemaker_program -> the program (found from the
//     spec's folder), run as `${env} ${interpreter} ${program} ${args_no_equals}` (script mode's
//     `--name value`) by the interpreter its `#!` line names (python without one; /bin/sh for a
//     .sh script), in SageMaker's training environment (`sagemaker:`, training_environment.hpp);
//     HyperParameterTuningJobName -> sagemaker.job_name; InputDataConfig -> sagemaker.channels
//     (a file:// URI or a local path as it is; an s3:// channel from a copy at
//     SPEC_FOLDER/input/data/CHANNEL); AlgorithmSpecification.MetricDefinitions ->
//     metric_definitions (the objective must be among them, as SageMaker checks);
//     Environment -> environment (values as written); StoppingCondition.MaxRuntimeInSeconds ->
//     trial_timeout_s, ResourceConfig.InstanceCount -> ranks_per_trial.
// Keys that only place the work on AWS (RoleArn, OutputDataConfig, the image, instance type, ...)
// are listed in notes->ignored for one warning, and where the config's keys came from in
// notes->origins. BadInput naming the file, line and key for what hpo cannot honour: no
// sagemaker_program (an image's own entrypoint), an objective no metric definition reads, an
// s3:// channel without a local copy, ReverseLogarithmic scaling, AutoParameters, several
// TrainingJobDefinitions, a warm start, another strategy configuration, a malformed value.
Status TranslateSageMakerTuningJob(const config_internal::ErrorFormatter& errors,
                                   const YAML::Node& root, const std::string& path,
                                   std::string* config_text, TranslationNotes* notes);

}  // namespace hpo
