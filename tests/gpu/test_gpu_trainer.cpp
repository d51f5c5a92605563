// The trainer on a GPU (run with mpirun -np 1 on a node with a GPU; skipped without one): a trial
// trained on cuda:0 through NcclGroupCollectives learns like the same trial on the CPU, and
// bf16-compressed gradients (ncclBfloat16) train too. One rank, so one GPU suffices.
#include <gtest/gtest.h>

#include <c10/cuda/CUDAFunctions.h>
#include <torch/torch.h>

#include <algorithm>
#include <string>

#include "gpu/cuda_device.hpp"
#include "gpu/nccl_collectives.hpp"
#include "hpo/mpi/communicator.hpp"
#include "hpo/task_catalog.hpp"
#include "train/builtin_classifier.hpp"
#include "train/trainer.hpp"

namespace hpo {
namespace {

ExecutionSpec SyntheticExecution() {
  ExecutionSpec execution;
  execution.task = "synthetic";
  execution.seed = 11;
  execution.synthetic.train_samples = 1000;
  execution.synthetic.val_samples = 200;
  execution.synthetic.features = 8;
  execution.synthetic.classes = 3;
  return execution;
}

TrialSpec Trial() {
  TrialSpec trial;
  trial.trial_id = 1;
  trial.seed = 2024;
  trial.params = {
      {"lr", 0.05},          {"batch_size", int64_t{32}}, {"optimizer", std::string("sgd")},
      {"momentum", 0.9},     {"weight_decay", 0.0},       {"dropout", 0.0},
      {"width", int64_t{16}}};
  return trial;
}

double FinalAccuracy(const TrialOutcome& outcome) {
  const auto& names = ClassifierMetricNames();
  const size_t index = static_cast<size_t>(
      std::find(names.begin(), names.end(), std::string("val_accuracy")) - names.begin());
  return outcome.curve.back().values[index];
}

TEST(GpuTrainerTest, TrainsOnTheGpuLikeOnTheCpu) {
  if (c10::cuda::device_count() < 1) GTEST_SKIP() << "needs a GPU";
  int device = 0;
  ASSERT_TRUE(SelectCudaDevice(0, 1, 1, &device).ok());
  const ExecutionSpec execution = SyntheticExecution();
  TaskData data;
  ASSERT_TRUE(LoadTaskData(execution, &data).ok());
  AlwaysContinue gate;
  TrainOptions options;
  options.epochs = 3;
  options.bucket_bytes = 256;  // several buckets, reduced during backward
  SingleRankCollectives cpu_group;
  TrialOutcome cpu;
  BuiltinClassifier task(execution.task, data);
  const TrainingSetup setup = BuiltinClassifierSetup(&task, execution);
  ASSERT_TRUE(RunTrial(setup, Trial(), cpu_group, gate, options, &cpu).ok());
  ASSERT_EQ(cpu.status, TrialStatus::kCompleted) << cpu.message;

  const Communicator world = Communicator::World();
  NcclGroupCollectives gpu_group(world);
  options.device = torch::Device(torch::kCUDA, device);
  for (const bool compressed : {false, true}) {
    if (compressed) options.compression = ReducedFloat::kBFloat16;
    TrialOutcome gpu;
    std::unique_ptr<TrainableModel> model;
    ASSERT_TRUE(RunTrial(setup, Trial(), gpu_group, gate, options, &gpu, &model).ok());
    ASSERT_EQ(gpu.status, TrialStatus::kCompleted) << gpu.message;
    for (const torch::Tensor& parameter : model->Parameters()) {
      EXPECT_TRUE(parameter.is_cuda());
    }
    EXPECT_NEAR(FinalAccuracy(gpu), FinalAccuracy(cpu), 0.03) << "compressed " << compressed;
  }
}

}  // namespace
}  // namespace hpo
