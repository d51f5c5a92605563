// DDP across real MPI ranks: identical weights after training, and N ranks == 1 rank.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>

#include "classifier_task_spec.hpp"
#include "hpo/mpi/communicator.hpp"
#include "hpo/mpi/group_layout.hpp"
#include "mpi/mpi_collectives.hpp"
#include "train/trainer.hpp"

namespace hpo {
namespace {

// Every parameter and buffer of `model`, flattened into bytes in registration order.
std::vector<char> ModelBytes(TrainableModel& model) {
  std::vector<char> bytes;
  auto append = [&bytes](const torch::Tensor& tensor) {
    torch::Tensor flat = tensor.detach().contiguous().cpu();
    const char* data = static_cast<const char*>(flat.data_ptr());
    bytes.insert(bytes.end(), data, data + flat.numel() * flat.element_size());
  };
  for (const torch::Tensor& parameter : model.Parameters()) append(parameter);
  for (const torch::Tensor& buffer : model.Buffers()) append(buffer);
  return bytes;
}

testing::ClassifierTaskSpec SyntheticExecution() {
  testing::ClassifierTaskSpec execution;
  execution.task = "synthetic";
  execution.seed = 5;
  execution.epochs = 2;
  execution.synthetic.train_samples = 1000;  // not a multiple of the batch: a partial last batch
  execution.synthetic.val_samples = 300;
  execution.synthetic.test_samples = 100;
  execution.synthetic.features = 12;
  execution.synthetic.classes = 3;
  return execution;
}

TrialSpec MakeTrial(const std::string& optimizer, double dropout) {
  TrialSpec trial;
  trial.trial_id = 0;
  trial.seed = 1234;
  trial.params = {{"lr", 0.01},
                  {"batch_size", int64_t{64}},
                  {"optimizer", optimizer},
                  {"dropout", dropout},
                  {"width", int64_t{24}}};
  return trial;
}

// Runs `trial` on every rank of this rank's group; EXPECTs every rank's final model to be
// bit-identical to its leader's.
void ExpectGroupEndsBitIdentical(const testing::ClassifierTaskSpec& execution,
                                 const TrialSpec& trial) {
  GroupLayout layout;
  ASSERT_TRUE(ComputeGroupLayout(Communicator::World(), 2, &layout).ok());
  TaskData data;
  Status loaded = testing::LoadClassifierData(execution, &data);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  MpiGroupCollectives collectives(layout.group_comm);
  AlwaysContinue gate;
  TrainOptions options;
  options.epochs = execution.epochs;
  options.bucket_bytes = 16 << 10;  // several buckets even for small models
  TrialOutcome outcome;
  const std::unique_ptr<TensorClassifier> task = testing::MakeClassifier(execution, data);
  std::unique_ptr<TrainableModel> model;
  Status status = RunTrial(ClassifierSetup(task.get(), execution.threads_per_rank), trial,
                           collectives, gate, options, &outcome, &model);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(outcome.status, TrialStatus::kCompleted) << outcome.message;
  ASSERT_EQ(static_cast<int64_t>(outcome.curve.size()), execution.epochs);

  std::vector<char> mine = ModelBytes(*model);
  std::vector<char> leaders = mine;
  collectives.Broadcast(leaders.data(), leaders.size(), 0);
  EXPECT_EQ(std::memcmp(mine.data(), leaders.data(), mine.size()), 0)
      << "rank " << layout.rank_in_group << " of group " << layout.group
      << " ended with different weights or buffers";
  // The metrics every rank reports are identical too.
  std::vector<double> metrics;
  for (const EpochMetrics& epoch : outcome.curve) {
    metrics.insert(metrics.end(), epoch.values.begin(), epoch.values.end() - 1);  // not the time
  }
  std::vector<double> leader_metrics = metrics;
  collectives.Broadcast(leader_metrics.data(), leader_metrics.size() * sizeof(double), 0);
  EXPECT_EQ(metrics, leader_metrics);
}

TEST(DdpMpi, EveryRankOfAGroupEndsWithBitIdenticalWeightsWithDropout) {
  ExpectGroupEndsBitIdentical(SyntheticExecution(), MakeTrial("adam", 0.3));
}

TEST(DdpMpi, BatchNormBuffersStayIdenticalOnFashionMnist) {
  testing::ClassifierTaskSpec execution;
  execution.task = "fashion_mnist";
  execution.epochs = 1;
  execution.fashion.train_samples = 600;
  execution.fashion.validation_samples = 200;
  TrialSpec trial = MakeTrial("sgd", 0.1);
  trial.params.back().value = int64_t{4};  // width 4: a small CNN
  ExpectGroupEndsBitIdentical(execution, trial);
}

TEST(DdpMpi, TwoRankTrialMatchesOneRankTrialWithTheSameGlobalBatch) {
  const Communicator world = Communicator::World();
  ASSERT_EQ(world.size(), 4);
  // Ranks 0 and 1 train together; rank 2 trains alone; rank 3 sits this one out.
  const int color = world.rank() < 2 ? 0 : (world.rank() == 2 ? 1 : 2);
  Communicator group = world.Split(color, world.rank());
  const testing::ClassifierTaskSpec execution = SyntheticExecution();
  std::vector<double> curve(2 * 3, 0.0);  // per epoch: train_loss, val_loss, val_accuracy
  if (color != 2) {
    TaskData data;
    ASSERT_TRUE(testing::LoadClassifierData(execution, &data).ok());
    MpiGroupCollectives collectives(group);
    AlwaysContinue gate;
    TrainOptions options;
    options.epochs = execution.epochs;
    TrialOutcome outcome;
    const std::unique_ptr<TensorClassifier> task = testing::MakeClassifier(execution, data);
    ASSERT_TRUE(RunTrial(ClassifierSetup(task.get(), execution.threads_per_rank),
                         MakeTrial("sgd", 0.0), collectives, gate, options, &outcome)
                    .ok());
    ASSERT_EQ(outcome.curve.size(), 2u);
    for (size_t epoch = 0; epoch < 2; ++epoch) {
      for (size_t metric = 0; metric < 3; ++metric) {
        curve[epoch * 3 + metric] = outcome.curve[epoch].values[metric];
      }
    }
  }
  std::vector<double> single(curve.size());
  if (world.rank() == 2) {
    MPI_Send(curve.data(), static_cast<int>(curve.size()), MPI_DOUBLE, 0, 7, world.get());
  } else if (world.rank() == 0) {
    MPI_Recv(single.data(), static_cast<int>(single.size()), MPI_DOUBLE, 2, 7, world.get(),
             MPI_STATUS_IGNORE);
    for (size_t i = 0; i < curve.size(); ++i) {
      EXPECT_NEAR(curve[i], single[i], 1e-4 * std::max(1.0, std::abs(single[i])))
          << "epoch " << i / 3 + 1 << " metric " << i % 3;
    }
  }
}

}  // namespace
}  // namespace hpo
