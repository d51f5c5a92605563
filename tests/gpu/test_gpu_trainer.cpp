// The trainer on a GPU (run with mpirun -np 1 on a node with a GPU; skipped without one): a trial
// trained on cuda:0 through NcclGroupCollectives learns like the same trial on the CPU, and
// bf16-compressed gradients (ncclBfloat16) train too; trials sharing a GPU are held to their share
// of its memory. One rank, so one GPU suffices.
#include <gtest/gtest.h>

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime_api.h>
#include <torch/torch.h>

#include <algorithm>
#include <string>

#include "classifier_task_spec.hpp"
#include "gpu/cuda_device.hpp"
#include "gpu/nccl_collectives.hpp"
#include "hpo/mpi/communicator.hpp"
#include "hpo/task_catalog.hpp"
#include "tasks/classifier_description.hpp"
#include "train/trainer.hpp"

namespace hpo {
namespace {

testing::ClassifierTaskSpec SyntheticExecution() {
  testing::ClassifierTaskSpec execution;
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
  const int device = 0;
  ASSERT_TRUE(ActivateCudaDevice(device, 1).ok());
  const testing::ClassifierTaskSpec execution = SyntheticExecution();
  TaskData data;
  ASSERT_TRUE(testing::LoadClassifierData(execution, &data).ok());
  AlwaysContinue gate;
  TrainOptions options;
  options.epochs = 3;
  options.bucket_bytes = 256;  // several buckets, reduced during backward
  SingleRankCollectives cpu_group;
  TrialOutcome cpu;
  const std::unique_ptr<TensorClassifier> task = testing::MakeClassifier(execution, data);
  const TrainingSetup setup = ClassifierSetup(task.get(), execution.threads_per_rank);
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

// Runs last in this process (gtest keeps file order): it caps the allocator for good.
TEST(GpuTrainerTest, TrialsSharingAGpuAreHeldToTheirShare) {
  if (c10::cuda::device_count() < 1) GTEST_SKIP() << "needs a GPU";
  const int64_t sharing = 4;
  ASSERT_TRUE(ActivateCudaDevice(0, sharing).ok());
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  const auto floats = [&](double share) {
    return static_cast<int64_t>(share * static_cast<double>(total_bytes) / sizeof(float));
  };
  const auto on_gpu = torch::TensorOptions().dtype(torch::kFloat32).device(torch::kCUDA, 0);
  // Within its quarter: fine. Beyond it, though the device has the memory free: out of memory.
  EXPECT_NO_THROW(torch::empty({floats(0.15)}, on_gpu));
  c10::cuda::CUDACachingAllocator::emptyCache();
  ASSERT_GT(static_cast<double>(free_bytes), 0.4 * static_cast<double>(total_bytes))
      << "the GPU is busy with other work";
  EXPECT_THROW(torch::empty({floats(0.3)}, on_gpu), c10::OutOfMemoryError);

  // A trial that does not fit its share fails with the runner's advice first. The share is made
  // about 32 MiB on any card (k processes' contexts take k GiB), which the widest model the
  // synthetic task takes (width 4096: one 4096 x 4096 layer alone is 64 MiB) cannot fit.
  const int64_t crowded = static_cast<int64_t>(total_bytes / ((1024 + 32) * 1024 * 1024));
  ASSERT_TRUE(ActivateCudaDevice(0, crowded).ok());
  const testing::ClassifierTaskSpec execution = SyntheticExecution();
  TaskData data;
  ASSERT_TRUE(testing::LoadClassifierData(execution, &data).ok());
  const std::unique_ptr<TensorClassifier> task = testing::MakeClassifier(execution, data);
  const TrainingSetup setup = ClassifierSetup(task.get(), execution.threads_per_rank);
  TrialSpec trial = Trial();
  for (NamedValue& entry : trial.params) {
    if (entry.name == "width") entry.value = int64_t{4096};
  }
  AlwaysContinue gate;
  TrainOptions options;
  options.device = torch::Device(torch::kCUDA, 0);
  const std::string hint = "this trial may use 1/" + std::to_string(crowded) + " of GPU 0's memory";
  options.out_of_memory_hint = hint;
  const Communicator world = Communicator::World();
  NcclGroupCollectives group(world);
  TrialOutcome outcome;
  const Status status = RunTrial(setup, trial, group, gate, options, &outcome);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(outcome.status, TrialStatus::kFailed);
  EXPECT_NE(outcome.message.find("out of memory: " + hint), std::string::npos) << outcome.message;
}

}  // namespace
}  // namespace hpo
