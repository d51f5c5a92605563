// Every libtorch task (hpo/model_task.hpp: the built-in classifiers and a user's own) as a
// TaskRunner: the task made once per rank (its data loaded then), each trial trained by the DDP
// trainer from its checkpoint when it has one, the best trial evaluated on the task's test split.
#include <string>

#include "hpo/model_task.hpp"
#include "hpo/mpi/group_layout.hpp"
#include "hpo/task_runner.hpp"
#include "model_runtime/training_device.hpp"
#include "runtime/sweep.hpp"
#include "runtime/trial_files.hpp"
#include "train/trainer.hpp"

namespace hpo {

namespace {

class ModelTaskRunner final : public TaskRunner, public TrainingHooksUser {
 public:
  ModelTaskRunner(const SweepConfig& config, const GroupLayout& layout,
                  const TaskDescription& description, std::unique_ptr<ModelTask> task)
      : config_(config), layout_(layout), task_(std::move(task)) {
    setup_.task = task_.get();
    setup_.hyperparameters = description.hyperparameters();
    setup_.metric_names = config.metric_names;
    setup_.threads_per_rank = config.execution.threads_per_rank;
  }

  // Collective over the group: this rank's device made current, then the group's data plane.
  Status Prepare() {
    HPO_RETURN_IF_ERROR(ActivateDevice(layout_, config_.execution.trials_per_gpu));
    collectives_ = MakeGroupCollectives(layout_);
    return Status::Ok();
  }

  Status RunTrial(const TrialSpec& trial, const TrialContext& context,
                  TrialOutcome* outcome) override {
    TrainOptions options;
    options.epochs = config_.execution.epochs;
    options.save_weights_path = WeightsPath(context.output, trial.trial_id);
    options.checkpoint_path = CheckpointPath(context.output, trial.trial_id);
    options.checkpoint_interval = config_.checkpoint.interval;
    options.bucket_bytes = static_cast<size_t>(config_.ddp.bucket_mb * (1 << 20));
    options.first_bucket_bytes = static_cast<size_t>(config_.ddp.first_bucket_mb * (1 << 20));
    options.overlap = config_.ddp.overlap;
    options.compression = config_.ddp.compression;
    if (layout_.gpu >= 0) {
      options.device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(layout_.gpu));
      const int64_t sharing = config_.execution.trials_per_gpu;
      if (sharing > 1) {
        options.out_of_memory_hint = "this trial may use 1/" + std::to_string(sharing) +
                                     " of GPU " + std::to_string(layout_.gpu) +
                                     "'s memory (trials_per_gpu: " + std::to_string(sharing) +
                                     "); lower trials_per_gpu or the batch size";
      }
    }
    options.resume = true;
    options.hooks = hooks_;
    return hpo::RunTrial(setup_, trial, *collectives_, context.gate, options, outcome);
  }

  void UseTrainingHooks(TrainingHooks* hooks) override { hooks_ = hooks; }

  Status EvaluateBest(const TrialResult& best, const std::string& output,
                      BestTrialReport* report) override {
    const std::string weights = WeightsPath(output, best.trial_id);
    report->model_path = weights;
    if (task_->test_data() == nullptr) return Status::Ok();
    Evaluation evaluation;
    HPO_RETURN_IF_ERROR(EvaluateSavedModel(setup_, best.params, weights, &evaluation));
    report->test_metrics = std::move(evaluation.metrics);
    report->test_tables = std::move(evaluation.tables);
    return Status::Ok();
  }

 private:
  const SweepConfig& config_;
  const GroupLayout& layout_;
  std::unique_ptr<GroupCollectives> collectives_;  // made by Prepare
  std::unique_ptr<ModelTask> task_;
  TrainingSetup setup_;
  TrainingHooks* hooks_ = nullptr;  // none unless RunSweep was given some
};

}  // namespace

void AddModelTask(TaskRegistry* registry, std::shared_ptr<const TaskDescription> description,
                  ModelTaskFactory factory) {
  TaskRunnerFactory runner_factory = [description, factory = std::move(factory)](
                                         const SweepConfig& config, const GroupLayout& layout,
                                         std::unique_ptr<TaskRunner>* runner) {
    std::unique_ptr<ModelTask> task;
    HPO_RETURN_IF_ERROR(factory(config, &task));
    auto model_runner =
        std::make_unique<ModelTaskRunner>(config, layout, *description, std::move(task));
    HPO_RETURN_IF_ERROR(model_runner->Prepare());
    *runner = std::move(model_runner);
    return Status::Ok();
  };
  registry->Add(std::move(description), std::move(runner_factory));
}

}  // namespace hpo
