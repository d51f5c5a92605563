// A DDP trial on 2 GPUs (NCCL between them) against the same trial on 1 GPU with the same global
// batch: after 3 steps every weight agrees to 1e-4. Run with mpirun -np 2 on a node with 2 GPUs;
// skipped, saying why, with fewer.
#include <gtest/gtest.h>

#include <c10/cuda/CUDAFunctions.h>
#include <torch/torch.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "classifier_task_spec.hpp"
#include "gpu/cuda_device.hpp"
#include "gpu/nccl_collectives.hpp"
#include "hpo/mpi/communicator.hpp"
#include "train/trainer.hpp"

namespace hpo {
namespace {

constexpr int64_t kBatch = 64;
constexpr int64_t kSteps = 3;

testing::ClassifierTaskSpec ThreeStepExecution() {
  testing::ClassifierTaskSpec execution;
  execution.task = "synthetic";
  execution.seed = 9;
  execution.epochs = 1;
  execution.synthetic.train_samples = kBatch * kSteps;
  execution.synthetic.val_samples = 64;
  execution.synthetic.features = 16;
  execution.synthetic.classes = 4;
  return execution;
}

TrialSpec Trial() {
  TrialSpec trial;
  trial.trial_id = 3;
  trial.seed = 77;
  trial.params = {{"lr", 0.05},
                  {"batch_size", kBatch},
                  {"optimizer", std::string("sgd")},
                  {"dropout", 0.0},
                  {"width", int64_t{32}}};
  return trial;
}

// The trial's final parameters, on the host, in registration order.
std::vector<torch::Tensor> Train(GroupCollectives& collectives, int device) {
  const testing::ClassifierTaskSpec execution = ThreeStepExecution();
  TaskData data;
  EXPECT_TRUE(testing::LoadClassifierData(execution, &data).ok());
  const std::unique_ptr<TensorClassifier> task = testing::MakeClassifier(execution, data);
  AlwaysContinue gate;
  TrainOptions options;
  options.epochs = 1;
  options.bucket_bytes = 4 << 10;  // several buckets, overlapped with backward
  options.device = torch::Device(torch::kCUDA, device);
  TrialOutcome outcome;
  std::unique_ptr<TrainableModel> model;
  const Status status = RunTrial(ClassifierSetup(task.get(), execution.threads_per_rank), Trial(),
                                 collectives, gate, options, &outcome, &model);
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(outcome.status, TrialStatus::kCompleted) << outcome.message;
  std::vector<torch::Tensor> parameters;
  if (model == nullptr) return parameters;
  for (const torch::Tensor& parameter : model->Parameters()) {
    parameters.push_back(parameter.detach().cpu());
  }
  return parameters;
}

TEST(GpuDdpTest, TwoGpusMatchOneGpuWithTheSameGlobalBatch) {
  const Communicator world = Communicator::World();
  const int gpus = static_cast<int>(c10::cuda::device_count());
  if (world.size() != 2 || gpus < 2) {
    GTEST_SKIP() << "needs 2 ranks on 2 GPUs: " << world.size() << " ranks, " << gpus
                 << " GPUs visible";
  }
  ASSERT_TRUE(ActivateCudaDevice(world.rank(), 1).ok());
  std::vector<torch::Tensor> alone;
  if (world.rank() == 0) {
    Communicator self = world.Split(0, 0);
    NcclGroupCollectives one_gpu(self);
    alone = Train(one_gpu, 0);
  } else {
    world.Split(MPI_UNDEFINED, 1);
  }
  NcclGroupCollectives two_gpus(world);
  const std::vector<torch::Tensor> together = Train(two_gpus, world.rank());
  if (world.rank() != 0) return;
  ASSERT_EQ(alone.size(), together.size());
  for (size_t i = 0; i < alone.size(); ++i) {
    const double difference = (alone[i] - together[i]).abs().max().item<double>();
    EXPECT_LE(difference, 1e-4) << "parameter " << i << " after " << kSteps << " steps";
  }
}

}  // namespace
}  // namespace hpo
