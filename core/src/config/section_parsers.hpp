// Private to the config parser: the sections that steer search and early stopping, W&B's
// `sweep.early_terminate` and the keys beside `sweep:` that W&B has no word for (`search:`,
// `median_stopping:`, `time_budget_s`, `max_failed_trials`). Each checks its keys against the
// sweep's method and epochs, so a setting that could never take effect is an error naming its key
// and line ("FILE:LINE: KEY.PATH: what is wrong"), never silently ignored.
#pragma once

#include <cstdint>

#include "hpo/config.hpp"
#include "hpo/status.hpp"
#include "hpo/task_catalog.hpp"
#include "yaml_fields.hpp"

namespace hpo::config_internal {

// `sweep.early_terminate` (W&B's hyperband_stopping: type hyperband; min_iter, or max_iter and s;
// eta >= 2, default 3). Every rung it defines must lie below `epochs`: min_iter < epochs,
// max_iter <= epochs and max_iter / eta^s >= 1. Sets spec->enabled.
Status ParseEarlyTerminate(const ErrorFormatter& errors, const Field& field, int64_t epochs,
                           HyperbandSpec* spec);

// `search:` {model: tpe|tpe_independent|gp|curves, startup_trials >= 1, candidates >= 1,
// sampler: random|sobol}. model, startup_trials and candidates are only used by method bayes
// (candidates only by the TPE models),
// sampler sobol only by method random; any of them elsewhere is an error.
Status ParseSearchOptions(const ErrorFormatter& errors, const Field& field, SearchMethod method,
                          SearchOptions* options);

// `asha:` beside `sweep:` (hpo's own, so that `sweep:` stays a valid W&B sweep): `promotion`
// switches sweep.early_terminate's ASHA to its promotion variant. BadInput without an
// early_terminate to apply to.
Status ParseAsha(const ErrorFormatter& errors, const Field& field, HyperbandSpec* spec);

// `median_stopping:` {min_trials >= 1, start_step >= 1}; its presence enables the rule, which
// needs start_step < epochs (it never stops a trial at its last epoch). Sets spec->enabled.
Status ParseMedianStopping(const ErrorFormatter& errors, const Field& field, int64_t epochs,
                           MedianStoppingSpec* spec);

// `time_budget_s` (a number > 0), `max_failed_trials` (an integer >= 0) and `trial_retries` (an
// integer in [0, 100]) from the top level.
Status ParseBudget(const ErrorFormatter& errors, const MappingFields& top, BudgetSpec* budget);

// `checkpoint:` {interval: epochs >= 0, grace_period_s > 0}.
Status ParseCheckpoint(const ErrorFormatter& errors, const Field& field, CheckpointSpec* spec);

// `pbt:` {population >= 2, perturbation_interval in [1, epochs), quantile in (0, 0.5], mutations:
// parameters of the sweep that are not constants and that `task` lets a checkpoint carry across
// (TaskDescription::BindsCheckpoint), resample_probability in [0, 1]} (PbtSpec), read after the
// rest of the config. BadInput, at the line of `pbt:`, beside early_terminate or median_stopping,
// with several objectives, without checkpoints (checkpoint.interval 0), or in a command sweep
// without `epochs`.
Status ParsePbt(const ErrorFormatter& errors, const Field& field, const MappingFields& top,
                const SweepConfig& config, const TaskDescription& task, PbtSpec* spec);

// `ddp:` {bucket_mb > 0, first_bucket_mb > 0, overlap: true|false}.
Status ParseDdp(const ErrorFormatter& errors, const Field& field, DdpSpec* spec);

// `warm_start:` (a non-empty path, or a list of distinct ones). Nothing is read here: the studies
// are opened when the sweep starts (LoadWarmStart).
Status ParseWarmStart(const ErrorFormatter& errors, const Field& field,
                      std::vector<WarmStartStudy>* studies);

// The keys beside `sweep:` that only command sweeps take.
inline constexpr std::initializer_list<const char*> kCommandKeys = {
    "metrics",         "metric_definitions", "interpreter",
    "trial_timeout_s", "terminate_grace_s",  "cuda_visible_devices",
    "environment",     "metrics_file",       "sagemaker"};

// A command sweep's program and how to read it: W&B's `program` and `command` from the sweep
// section (`program` resolved against `config_dir`; the command's macros checked, and whatever
// it starts first checked to exist) and kCommandKeys from `top` (null for a bare W&B file, which
// has none). `objectives` are the sweep's objectives: a metric definition must name one of them
// or one of `metrics`.
Status ParseCommand(const ErrorFormatter& errors, const MappingFields& sweep,
                    const MappingFields* top, const std::string& config_dir,
                    const std::vector<MetricSpec>& objectives, CommandSpec* spec);

}  // namespace hpo::config_internal
