// The built-in libtorch classifiers (fashion_mnist, synthetic) as a TaskRunner: data loaded once
// per rank, each trial trained by the DDP trainer from its checkpoint when it has one.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "builtin_tasks.hpp"
#include "hpo/mpi/mpi_collectives.hpp"
#include "hpo/train/task_data.hpp"
#include "hpo/train/trainer.hpp"
#if HPO_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>

#include "hpo/gpu/nccl_collectives.hpp"
#endif

namespace hpo {

namespace {

namespace fs = std::filesystem;

// HPO_INJECT_FAULT=KIND:TRIAL:EPOCH:RANK (KIND exception or oom): a fault for failure tests.
Status ReadFaultInjection(FaultInjection* fault) {
  const char* text = std::getenv("HPO_INJECT_FAULT");
  if (text == nullptr || *text == '\0') return Status::Ok();
  char kind[16] = {0};
  long long trial = 0;
  long long epoch = 0;
  int rank = 0;
  char extra = 0;
  if (std::sscanf(text, "%15[a-z]:%lld:%lld:%d%c", kind, &trial, &epoch, &rank, &extra) != 4 ||
      (std::string(kind) != "exception" && std::string(kind) != "oom")) {
    return Status::BadInput(std::string("HPO_INJECT_FAULT=") + text +
                            ": expected KIND:TRIAL:EPOCH:RANK with KIND exception or oom");
  }
  fault->kind = std::string(kind) == "oom" ? FaultInjection::Kind::kOutOfMemory
                                           : FaultInjection::Kind::kException;
  fault->trial_id = trial;
  fault->epoch = epoch;
  fault->rank = rank;
  return Status::Ok();
}

class ClassifierRunner final : public TaskRunner {
 public:
  ClassifierRunner(const SweepConfig& config, const GroupLayout& layout)
      : config_(config), collectives_(layout.group_comm) {}

  Status Prepare() {
    HPO_RETURN_IF_ERROR(ReadFaultInjection(&fault_));
    return LoadTaskData(config_.execution, &data_);
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
#if HPO_WITH_CUDA
    options.device =
        torch::Device(torch::kCUDA, c10::cuda::current_device());  // SelectCudaDevice's
#endif
    options.resume = true;
    options.fault = fault_;
    return hpo::RunTrial(config_.execution, trial, data_, collectives_, context.gate, options,
                         outcome);
  }

  Status EvaluateBest(const TrialResult& best, const std::string& output,
                      BestTrialReport* report) override {
    const std::string weights = WeightsPath(output, best.trial_id);
    report->model_path = weights;
    double accuracy = 0.0;
    HPO_RETURN_IF_ERROR(
        EvaluateSavedModel(config_.execution, best.params, weights, data_, &accuracy));
    report->test_metrics.emplace_back("test_accuracy", accuracy);
    return Status::Ok();
  }

 private:
  const SweepConfig& config_;
#if HPO_WITH_CUDA
  NcclGroupCollectives collectives_;
#else
  MpiGroupCollectives collectives_;
#endif
  FaultInjection fault_;
  TaskData data_;
};

}  // namespace

Status MakeClassifierRunner(const SweepConfig& config, const GroupLayout& layout,
                            std::unique_ptr<TaskRunner>* runner) {
  auto classifier = std::make_unique<ClassifierRunner>(config, layout);
  HPO_RETURN_IF_ERROR(classifier->Prepare());
  *runner = std::move(classifier);
  return Status::Ok();
}

std::string WeightsPath(const std::string& output, int64_t trial_id) {
  return (fs::path(output) / "models" / ("trial_" + std::to_string(trial_id) + ".pt")).string();
}

std::string CheckpointPath(const std::string& output, int64_t trial_id) {
  return (fs::path(output) / "checkpoints" / ("trial_" + std::to_string(trial_id) + ".pt"))
      .string();
}

std::string CheckpointDir(const std::string& output, int64_t trial_id) {
  return (fs::path(output) / "checkpoints" / ("trial_" + std::to_string(trial_id))).string();
}

}  // namespace hpo
