#include "train/trainer.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "classifier_task_spec.hpp"
#include "hpo/task_catalog.hpp"
#include "support/fault_injector.hpp"
#include "tasks/classifier_description.hpp"
#include "thread_collectives.hpp"

namespace hpo {
namespace {

constexpr char kDebianFolder[] = "/usr/share/datasets/fashion-mnist";

Assignment Params(double lr, int64_t batch_size, const std::string& optimizer, int64_t width = 16) {
  return {{"lr", lr},        {"batch_size", batch_size}, {"optimizer", optimizer},
          {"momentum", 0.9}, {"weight_decay", 0.0},      {"dropout", 0.0},
          {"width", width}};
}

testing::ClassifierTaskSpec SyntheticExecution(int64_t train_samples = 250) {
  testing::ClassifierTaskSpec execution;
  execution.task = "synthetic";
  execution.seed = 11;
  execution.threads_per_rank = 1;
  execution.synthetic.train_samples = train_samples;
  execution.synthetic.val_samples = 101;
  execution.synthetic.test_samples = 128;
  execution.synthetic.features = 8;
  execution.synthetic.classes = 3;
  return execution;
}

TaskData LoadOrDie(const testing::ClassifierTaskSpec& execution) {
  TaskData data;
  const Status status = testing::LoadClassifierData(execution, &data);
  EXPECT_TRUE(status.ok()) << status.message();
  return data;
}

TrialSpec Trial(Assignment params) {
  TrialSpec trial;
  trial.trial_id = 4;
  trial.seed = 2024;
  trial.params = std::move(params);
  return trial;
}

// The built-in classifier for `execution` on `data`, and the trainer's setup for it.
struct ClassifierUnderTest {
  ClassifierUnderTest(const testing::ClassifierTaskSpec& execution, const TaskData& data)
      : task(testing::MakeClassifier(execution, data)),
        setup(ClassifierSetup(task.get(), execution.threads_per_rank)) {}
  std::unique_ptr<TensorClassifier> task;
  TrainingSetup setup;
};

// The torch::nn::Sequential a built-in classifier's trained model wraps.
torch::nn::Sequential AsSequential(const std::unique_ptr<TrainableModel>& model) {
  const auto* module_model = dynamic_cast<const ModuleModel*>(model.get());
  if (module_model == nullptr) return torch::nn::Sequential(nullptr);
  return torch::nn::Sequential(
      std::dynamic_pointer_cast<torch::nn::SequentialImpl>(module_model->module()));
}

double TestAccuracy(const Evaluation& evaluation) {
  for (const auto& [name, value] : evaluation.metrics) {
    if (name == "test_accuracy") return value;
  }
  return -1.0;
}

struct RankResult {
  Status status;
  TrialOutcome outcome;
  torch::nn::Sequential model{nullptr};
};

// Trains `trial` as a group of `size` ranks: the single-rank collectives for 1, else threads.
template <typename Gate = AlwaysContinue>
std::vector<RankResult> RunGroup(int size, const testing::ClassifierTaskSpec& execution,
                                 const TrialSpec& trial, const TaskData& data,
                                 const TrainOptions& options) {
  std::vector<RankResult> results(size);
  const auto run = [&](GroupCollectives& collectives) {
    Gate gate;
    RankResult& result = results[collectives.rank()];
    ClassifierUnderTest classifier(execution, data);
    std::unique_ptr<TrainableModel> model;
    result.status =
        RunTrial(classifier.setup, trial, collectives, gate, options, &result.outcome, &model);
    result.model = AsSequential(model);
  };
  if (size == 1) {
    SingleRankCollectives single;
    run(single);
  } else {
    testing::RunOnThreads(size, run);
  }
  return results;
}

void ExpectIdenticalModels(const torch::nn::Sequential& a, const torch::nn::Sequential& b) {
  const auto pa = a->parameters();
  const auto pb = b->parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(torch::equal(pa[i], pb[i])) << "param " << i;
  const auto ba = a->buffers();
  const auto bb = b->buffers();
  ASSERT_EQ(ba.size(), bb.size());
  for (size_t i = 0; i < ba.size(); ++i) EXPECT_TRUE(torch::equal(ba[i], bb[i])) << "buffer " << i;
}

// Both trials completed and ended with bit-identical models.
void ExpectCompletedWithIdenticalModels(const RankResult& a, const RankResult& b) {
  ASSERT_EQ(a.outcome.status, TrialStatus::kCompleted) << a.outcome.message;
  ASSERT_EQ(b.outcome.status, TrialStatus::kCompleted) << b.outcome.message;
  ExpectIdenticalModels(a.model, b.model);
}

size_t MetricIndex(const std::string&, const std::string& name) {
  const std::vector<std::string>& names = ClassifierMetricNames();
  return static_cast<size_t>(std::find(names.begin(), names.end(), name) - names.begin());
}

// N ranks on N shards of every global batch make the same updates as one rank.
void ExpectMatchesOneRank(int size, const testing::ClassifierTaskSpec& execution,
                          const TrialSpec& trial, int64_t epochs) {
  const TaskData data = LoadOrDie(execution);
  TrainOptions options;
  options.epochs = epochs;
  options.bucket_bytes = 256;  // several buckets
  const std::vector<RankResult> one = RunGroup(1, execution, trial, data, options);
  const std::vector<RankResult> many = RunGroup(size, execution, trial, data, options);
  ASSERT_TRUE(one[0].status.ok()) << one[0].status.message();
  ASSERT_EQ(one[0].outcome.status, TrialStatus::kCompleted) << one[0].outcome.message;
  ASSERT_EQ(one[0].outcome.curve.size(), static_cast<size_t>(epochs));
  const size_t time_index = MetricIndex(execution.task, "epoch_time_s");
  for (const RankResult& rank : many) {
    ASSERT_TRUE(rank.status.ok()) << rank.status.message();
    ASSERT_EQ(rank.outcome.status, TrialStatus::kCompleted) << rank.outcome.message;
    ASSERT_EQ(rank.outcome.curve.size(), static_cast<size_t>(epochs));
    for (int64_t e = 0; e < epochs; ++e) {
      const std::vector<double>& expected = one[0].outcome.curve[e].values;
      const std::vector<double>& actual = rank.outcome.curve[e].values;
      ASSERT_EQ(actual.size(), expected.size());
      for (size_t m = 0; m < actual.size(); ++m) {
        if (m == time_index) continue;
        EXPECT_NEAR(actual[m], expected[m], 1e-4 * std::fabs(expected[m]) + 1e-12)
            << "epoch " << e + 1 << " metric " << ClassifierMetricNames()[m];
      }
      // Identical metrics, epoch time included, on every rank of the group.
      EXPECT_EQ(actual, many[0].outcome.curve[e].values);
    }
    ExpectIdenticalModels(rank.model, many[0].model);
  }
  const auto single = one[0].model->parameters();
  const auto group = many[0].model->parameters();
  for (size_t i = 0; i < single.size(); ++i) {
    EXPECT_TRUE(torch::allclose(group[i], single[i], 1e-4, 1e-5)) << "param " << i;
  }
}

TEST(TrainerDdpTest, TwoRanksMatchOneRankSgd) {
  ExpectMatchesOneRank(2, SyntheticExecution(), Trial(Params(0.1, 32, "sgd")), 3);
}

TEST(TrainerDdpTest, ThreeRanksUnevenShardsMatchOneRankAdamW) {
  // 250 samples in batches of 32 (last 26): slices of 11/11/10 and 9/9/8.
  ExpectMatchesOneRank(3, SyntheticExecution(), Trial(Params(0.01, 32, "adamw")), 2);
}

TEST(TrainerDdpTest, RanksWithEmptySlicesStillMatch) {
  // Global batches of 2 on 3 ranks: rank 2's slice is always empty.
  ExpectMatchesOneRank(3, SyntheticExecution(40), Trial(Params(0.05, 2, "sgd")), 2);
}

TEST(TrainerDdpTest, OverlappedAllreduceGivesTheWeightsOfAllreduceAfterBackward) {
  const testing::ClassifierTaskSpec execution = SyntheticExecution();
  const TaskData data = LoadOrDie(execution);
  const TrialSpec trial = Trial(Params(0.01, 32, "adam"));
  for (int size : {1, 2}) {
    TrainOptions options;
    options.epochs = 2;
    options.bucket_bytes = 256;  // several buckets, so some start during backward
    options.first_bucket_bytes = 64;
    options.overlap = false;
    const std::vector<RankResult> after = RunGroup(size, execution, trial, data, options);
    options.overlap = true;
    const std::vector<RankResult> overlapped = RunGroup(size, execution, trial, data, options);
    for (int rank = 0; rank < size; ++rank) {
      ExpectCompletedWithIdenticalModels(overlapped[rank], after[rank]);
    }
  }
}

TEST(TrainerDdpTest, CompressedGradientsKeepRanksIdenticalAndLearnLikeFloat32) {
  const testing::ClassifierTaskSpec execution = SyntheticExecution(1000);
  const TaskData data = LoadOrDie(execution);
  const TrialSpec trial = Trial(Params(0.05, 32, "sgd"));
  TrainOptions options;
  options.epochs = 3;
  options.bucket_bytes = 256;  // several buckets
  options.first_bucket_bytes = 64;
  const std::vector<RankResult> full = RunGroup(2, execution, trial, data, options);
  ASSERT_EQ(full[0].outcome.status, TrialStatus::kCompleted) << full[0].outcome.message;
  const size_t accuracy = MetricIndex(execution.task, "val_accuracy");
  for (ReducedFloat format : {ReducedFloat::kBFloat16, ReducedFloat::kFloat16}) {
    options.compression = format;
    options.overlap = true;
    const std::vector<RankResult> overlapped = RunGroup(2, execution, trial, data, options);
    options.overlap = false;
    const std::vector<RankResult> after = RunGroup(2, execution, trial, data, options);
    for (int rank = 0; rank < 2; ++rank) {
      ExpectCompletedWithIdenticalModels(overlapped[rank], after[rank]);
      ExpectIdenticalModels(after[rank].model, after[0].model);
    }
    const auto compressed = after[0].model->parameters();
    const auto reference = full[0].model->parameters();
    bool differs = false;
    for (size_t i = 0; i < compressed.size(); ++i) {
      differs |= !torch::equal(compressed[i], reference[i]);
      // After 96 momentum-SGD steps the weights drift apart by the rounding: measured up to 5%
      // (relative norm) with bf16's 8 significant bits, 0.08% with fp16's 11.
      const double drift =
          (compressed[i] - reference[i]).norm().item<double>() / reference[i].norm().item<double>();
      EXPECT_LT(drift, format == ReducedFloat::kBFloat16 ? 0.15 : 0.005)
          << ReducedFloatName(format) << " param " << i;
    }
    EXPECT_TRUE(differs) << ReducedFloatName(format) << ": gradients were not rounded";
    EXPECT_NEAR(after[0].outcome.curve.back().values[accuracy],
                full[0].outcome.curve.back().values[accuracy], 0.03)
        << ReducedFloatName(format);
  }
}

TEST(TrainerTest, PrefetchingBatchesChangesNoWeights) {
  // 40 samples in batches of 6 on 3 ranks: uneven slices and an empty one in the last batch.
  const testing::ClassifierTaskSpec execution = SyntheticExecution(40);
  const TaskData data = LoadOrDie(execution);
  const TrialSpec trial = Trial(Params(0.05, 6, "adam"));
  for (int size : {1, 3}) {
    TrainOptions options;
    options.epochs = 2;
    options.prefetch_batches = 0;
    const std::vector<RankResult> plain = RunGroup(size, execution, trial, data, options);
    for (int64_t depth : {1, 2}) {
      options.prefetch_batches = depth;
      const std::vector<RankResult> prefetched = RunGroup(size, execution, trial, data, options);
      for (int rank = 0; rank < size; ++rank) {
        ExpectCompletedWithIdenticalModels(prefetched[rank], plain[rank]);
      }
    }
  }
}

TEST(TrainerTest, ReportsTheTaskMetricsEveryEpochAndLearns) {
  const testing::ClassifierTaskSpec execution = SyntheticExecution(1000);
  const TaskData data = LoadOrDie(execution);
  TrainOptions options;
  options.epochs = 4;
  const std::vector<RankResult> result =
      RunGroup(1, execution, Trial(Params(0.05, 32, "sgd")), data, options);
  ASSERT_TRUE(result[0].status.ok()) << result[0].status.message();
  const TrialOutcome& outcome = result[0].outcome;
  EXPECT_EQ(outcome.status, TrialStatus::kCompleted);
  EXPECT_TRUE(outcome.message.empty());
  ASSERT_EQ(outcome.curve.size(), 4u);
  const size_t train_loss = MetricIndex(execution.task, "train_loss");
  const size_t val_loss = MetricIndex(execution.task, "val_loss");
  const size_t accuracy = MetricIndex(execution.task, "val_accuracy");
  const size_t time = MetricIndex(execution.task, "epoch_time_s");
  double total_time = 0.0;
  for (size_t e = 0; e < outcome.curve.size(); ++e) {
    const EpochMetrics& metrics = outcome.curve[e];
    EXPECT_EQ(metrics.epoch, static_cast<int64_t>(e + 1));
    ASSERT_EQ(metrics.values.size(), ClassifierMetricNames().size());
    EXPECT_GE(metrics.values[accuracy], 0.0);
    EXPECT_LE(metrics.values[accuracy], 1.0);
    EXPECT_GT(metrics.values[time], 0.0);
    total_time += metrics.values[time];
  }
  EXPECT_LT(outcome.curve.back().values[train_loss], outcome.curve.front().values[train_loss]);
  EXPECT_LT(outcome.curve.back().values[val_loss], std::log(3.0));
  EXPECT_GT(outcome.curve.back().values[accuracy], 0.6);
  EXPECT_GE(outcome.duration_s, total_time);
}

TEST(TrainerTest, DefaultsApplyWhenNothingIsSwept) {
  const testing::ClassifierTaskSpec execution = SyntheticExecution();
  const TaskData data = LoadOrDie(execution);
  const std::vector<RankResult> result = RunGroup(1, execution, Trial({}), data, TrainOptions());
  ASSERT_TRUE(result[0].status.ok()) << result[0].status.message();
  EXPECT_EQ(result[0].outcome.status, TrialStatus::kCompleted);
  // width defaults to 16: features -> 16 -> 16 -> classes.
  EXPECT_EQ(result[0].model->parameters()[0].sizes(), (std::vector<int64_t>{16, 8}));
}

TEST(TrainerTest, NonFiniteLossFailsTheTrialOnEveryRank) {
  const testing::ClassifierTaskSpec execution = SyntheticExecution();
  const TaskData data = LoadOrDie(execution);
  TrainOptions options;
  options.epochs = 3;
  for (int size : {1, 2}) {
    const std::vector<RankResult> results =
        RunGroup(size, execution, Trial(Params(1e6, 16, "sgd")), data, options);
    for (const RankResult& rank : results) {
      ASSERT_TRUE(rank.status.ok()) << rank.status.message();
      EXPECT_EQ(rank.outcome.status, TrialStatus::kFailed);
      EXPECT_EQ(rank.outcome.message.rfind("non-finite loss at epoch ", 0), 0u)
          << rank.outcome.message;
      EXPECT_NE(rank.outcome.message.find(" step "), std::string::npos);
      EXPECT_EQ(rank.outcome.message, results[0].outcome.message);
      EXPECT_EQ(rank.outcome.curve.size(), results[0].outcome.curve.size());
    }
  }
}

class StopAfterFirstEpoch final : public EpochGate {
 public:
  EpochVerdict AfterEpoch(int64_t trial_id, const EpochMetrics& metrics) override {
    EXPECT_EQ(trial_id, 4);
    EXPECT_EQ(metrics.epoch, ++calls_);
    return EpochVerdict::kStop;
  }

 private:
  int64_t calls_ = 0;
};

TEST(TrainerTest, GateStopsTheTrialOnEveryRank) {
  const testing::ClassifierTaskSpec execution = SyntheticExecution();
  const TaskData data = LoadOrDie(execution);
  TrainOptions options;
  options.epochs = 3;
  const std::vector<RankResult> results =
      RunGroup<StopAfterFirstEpoch>(2, execution, Trial(Params(0.05, 32, "adam")), data, options);
  for (const RankResult& rank : results) {
    ASSERT_TRUE(rank.status.ok()) << rank.status.message();
    EXPECT_EQ(rank.outcome.status, TrialStatus::kStopped);
    EXPECT_EQ(rank.outcome.message, "stopped by scheduler after epoch 1");
    EXPECT_EQ(rank.outcome.curve.size(), 1u);
  }
  // A stop answer after the last epoch changes nothing: the trial has completed.
  options.epochs = 1;
  const std::vector<RankResult> last =
      RunGroup<StopAfterFirstEpoch>(1, execution, Trial(Params(0.05, 32, "adam")), data, options);
  EXPECT_EQ(last[0].outcome.status, TrialStatus::kCompleted);
  EXPECT_EQ(last[0].outcome.curve.size(), 1u);
}

TEST(TrainerTest, OutOfRangeHyperparametersAreBadInput) {
  const testing::ClassifierTaskSpec execution = SyntheticExecution();
  const TaskData data = LoadOrDie(execution);
  const std::vector<std::pair<std::string, ParamValue>> bad = {
      {"batch_size", int64_t{0}},
      {"optimizer", std::string("rmsprop")},
      {"lr", -1.0},
      {"lr", 0.0},
      {"dropout", 1.0},
      {"width", int64_t{0}},
      {"momentum", -0.5},
      {"weight_decay", -1.0},
      {"batch_size", 2.5},
      {"lr", std::string("fast")}};
  for (const auto& [name, value] : bad) {
    Assignment params = Params(0.1, 32, "sgd");
    for (NamedValue& entry : params) {
      if (entry.name == name) entry.value = value;
    }
    TrialOutcome outcome;
    AlwaysContinue gate;
    SingleRankCollectives single;
    ClassifierUnderTest classifier(execution, data);
    const Status status =
        RunTrial(classifier.setup, Trial(params), single, gate, TrainOptions(), &outcome);
    EXPECT_EQ(status.code(), Status::Code::kBadInput) << name << " " << FormatParamValue(value);
    EXPECT_NE(status.message().find(name), std::string::npos) << status.message();
  }
}

TEST(TrainerTest, WarmupRatioScalesTheLearningRateFromZero) {
  // With warm-up over every step (ratio just under 1), the first update has lr 0 and the rest are
  // smaller than without: the trained weights differ, and a 1-step epoch leaves the model as built.
  const testing::ClassifierTaskSpec execution = SyntheticExecution(32);
  const TaskData data = LoadOrDie(execution);
  TrainOptions options;
  options.epochs = 1;
  Assignment constant = Params(0.1, 32, "sgd");
  Assignment warm = constant;
  warm.push_back({"warmup_ratio", 0.99});
  const std::vector<RankResult> a = RunGroup(1, execution, Trial(constant), data, options);
  const std::vector<RankResult> b = RunGroup(1, execution, Trial(warm), data, options);
  ASSERT_EQ(a[0].outcome.status, TrialStatus::kCompleted) << a[0].outcome.message;
  ASSERT_EQ(b[0].outcome.status, TrialStatus::kCompleted) << b[0].outcome.message;
  TaskData fresh_data = data;
  const std::unique_ptr<TensorClassifier> task = testing::MakeClassifier(execution, fresh_data);
  std::unique_ptr<TrainableModel> untrained;
  torch::manual_seed(Trial(warm).seed);
  ASSERT_TRUE(task->BuildModel(warm, &untrained).ok());
  const auto built = untrained->Parameters();
  const auto trained_warm = b[0].model->parameters();
  const auto trained_constant = a[0].model->parameters();
  bool constant_moved = false;
  for (size_t i = 0; i < built.size(); ++i) {
    EXPECT_TRUE(torch::equal(built[i], trained_warm[i])) << "param " << i;
    constant_moved = constant_moved || !torch::equal(built[i], trained_constant[i]);
  }
  EXPECT_TRUE(constant_moved);
}

TEST(TrainerTest, LeaderSavesWeightsThatEvaluateLikeTheModel) {
  const testing::ClassifierTaskSpec execution = SyntheticExecution(1000);
  const TaskData data = LoadOrDie(execution);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("hpo_trainer_save_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  TrainOptions options;
  options.epochs = 4;
  options.save_weights_path = (dir / "nested" / "best.pt").string();
  const Assignment params = Params(0.05, 32, "sgd", 12);
  std::vector<RankResult> results = RunGroup(2, execution, Trial(params), data, options);
  ASSERT_TRUE(results[0].status.ok()) << results[0].status.message();
  ASSERT_TRUE(std::filesystem::exists(options.save_weights_path));

  ClassifierUnderTest classifier(execution, data);
  Evaluation evaluation;
  const Status status =
      EvaluateSavedModel(classifier.setup, params, options.save_weights_path, &evaluation);
  ASSERT_TRUE(status.ok()) << status.message();
  const double accuracy = TestAccuracy(evaluation);
  torch::NoGradGuard no_grad;
  results[0].model->eval();
  const double expected = results[0]
                              .model->forward(data.test.inputs)
                              .argmax(1)
                              .eq(data.test.labels)
                              .to(torch::kFloat64)
                              .mean()
                              .item<double>();
  EXPECT_DOUBLE_EQ(accuracy, expected);
  EXPECT_GT(accuracy, 0.5);

  ASSERT_EQ(evaluation.tables.size(), 1u);
  EXPECT_EQ(evaluation.tables[0].name, "confusion");
  double diagonal = 0.0;
  for (int64_t c = 0; c < evaluation.tables[0].rows; ++c) {
    diagonal +=
        evaluation.tables[0].values[static_cast<size_t>(c * evaluation.tables[0].columns + c)];
  }
  EXPECT_DOUBLE_EQ(diagonal / static_cast<double>(data.test.size()), accuracy);
  EXPECT_FALSE(
      EvaluateSavedModel(classifier.setup, params, (dir / "missing.pt").string(), &evaluation)
          .ok());
  std::filesystem::remove_all(dir);
}

bool HaveFashionMnist() {
  return std::filesystem::exists(std::string(kDebianFolder) + "/train-images-idx3-ubyte.gz");
}

testing::ClassifierTaskSpec FashionExecution(int64_t train_samples, int64_t validation_samples) {
  testing::ClassifierTaskSpec execution;
  execution.task = "fashion_mnist";
  execution.threads_per_rank = 1;
  execution.fashion.train_samples = train_samples;
  execution.fashion.validation_samples = validation_samples;
  return execution;
}

TEST(FashionMnistTrainingTest, OneEpochOn5000SamplesLearns) {
  if (!HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const testing::ClassifierTaskSpec execution = FashionExecution(5000, 2000);
  const TaskData data = LoadOrDie(execution);
  TrainOptions options;
  options.epochs = 1;
  const std::vector<RankResult> result =
      RunGroup(1, execution, Trial(Params(1e-3, 64, "adam", 8)), data, options);
  ASSERT_TRUE(result[0].status.ok()) << result[0].status.message();
  ASSERT_EQ(result[0].outcome.status, TrialStatus::kCompleted) << result[0].outcome.message;
  const EpochMetrics& metrics = result[0].outcome.curve.at(0);
  const double accuracy = metrics.values[MetricIndex(execution.task, "val_accuracy")];
  const double seconds = metrics.values[MetricIndex(execution.task, "epoch_time_s")];
  std::printf(
      "[fashion_mnist cnn width 8, batch 64, 1 thread] %.0f train samples/s "
      "(epoch incl. validation of 2000: %.2f s), val_accuracy %.4f\n",
      5000 / seconds, seconds, accuracy);
  EXPECT_GT(accuracy, 0.70);
}

TEST(FashionMnistTrainingTest, BatchNormStatisticsAgreeAcrossRanks) {
  if (!HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const testing::ClassifierTaskSpec execution = FashionExecution(300, 100);
  const TaskData data = LoadOrDie(execution);
  TrainOptions options;
  options.epochs = 1;
  const std::vector<RankResult> results =
      RunGroup(2, execution, Trial(Params(1e-3, 50, "adam", 4)), data, options);
  for (const RankResult& rank : results) {
    ASSERT_TRUE(rank.status.ok()) << rank.status.message();
    ASSERT_EQ(rank.outcome.status, TrialStatus::kCompleted) << rank.outcome.message;
  }
  ExpectIdenticalModels(results[0].model, results[1].model);
  // The running mean moved away from its initial zeros.
  EXPECT_GT(results[0].model->named_buffers()["1.running_mean"].abs().sum().item<float>(), 0.0f);
}

// Interrupts the trial after epoch `after_epoch` (as rank 0's coordinator does during a
// preemption), or, with `at_call` > 0, asks for an interruption before the at_call-th step.
template <int64_t kAfterEpoch, int64_t kAtCall>
class InterruptingGate final : public EpochGate {
 public:
  EpochVerdict AfterEpoch(int64_t, const EpochMetrics& metrics) override {
    return metrics.epoch == kAfterEpoch ? EpochVerdict::kInterrupt : EpochVerdict::kContinue;
  }
  bool InterruptRequested() override { return ++calls_ == kAtCall; }

 private:
  int64_t calls_ = 0;
};

// The metrics that do not depend on timing (all but epoch_time_s).
void ExpectSameCurves(const std::vector<EpochMetrics>& expected,
                      const std::vector<EpochMetrics>& actual) {
  ASSERT_EQ(expected.size(), actual.size());
  for (size_t e = 0; e < expected.size(); ++e) {
    EXPECT_EQ(expected[e].epoch, actual[e].epoch);
    for (size_t m = 0; m + 1 < expected[e].values.size(); ++m) {
      EXPECT_DOUBLE_EQ(expected[e].values[m], actual[e].values[m]) << "epoch " << e + 1;
    }
  }
}

void ExpectSameWeights(const torch::nn::Sequential& expected, const torch::nn::Sequential& actual) {
  const auto expected_state = expected->named_parameters();
  const auto actual_state = actual->named_parameters();
  for (const auto& entry : expected_state) {
    EXPECT_TRUE(torch::equal(entry.value(), actual_state[entry.key()])) << entry.key();
  }
}

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("hpo_checkpoint_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    options_.epochs = 4;
    options_.checkpoint_path = (dir_ / "trial_4.pt").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
  TrainOptions options_;
};

TEST_F(CheckpointTest, ResumingAfterAnEpochInterruptionEqualsTheUninterruptedRun) {
  const testing::ClassifierTaskSpec execution = SyntheticExecution(600);
  const TaskData data = LoadOrDie(execution);
  Assignment params = Params(0.05, 32, "adam");
  for (NamedValue& entry : params) {
    if (entry.name == "dropout") entry.value = 0.3;  // the masks must be drawn again alike
  }
  const std::vector<RankResult> whole = RunGroup(1, execution, Trial(params), data, options_);
  ASSERT_EQ(whole[0].outcome.status, TrialStatus::kCompleted);
  std::filesystem::remove(options_.checkpoint_path);

  const std::vector<RankResult> first =
      RunGroup<InterruptingGate<2, 0>>(1, execution, Trial(params), data, options_);
  ASSERT_TRUE(first[0].status.ok()) << first[0].status.message();
  EXPECT_EQ(first[0].outcome.status, TrialStatus::kRunning);
  EXPECT_EQ(first[0].outcome.message, "interrupted after epoch 2; checkpoint saved");
  ASSERT_TRUE(std::filesystem::exists(options_.checkpoint_path));

  TrainOptions resume = options_;
  resume.resume = true;
  const std::vector<RankResult> second = RunGroup(1, execution, Trial(params), data, resume);
  ASSERT_TRUE(second[0].status.ok()) << second[0].status.message();
  EXPECT_EQ(second[0].outcome.status, TrialStatus::kCompleted);
  EXPECT_EQ(second[0].outcome.resumed_epochs, 2);
  ExpectSameCurves(whole[0].outcome.curve, second[0].outcome.curve);
  ExpectSameWeights(whole[0].model, second[0].model);
}

TEST_F(CheckpointTest, ResumingMidEpochOnTwoRanksContinuesFromTheStep) {
  const testing::ClassifierTaskSpec execution = SyntheticExecution(600);
  const TaskData data = LoadOrDie(execution);
  const Assignment params = Params(0.05, 32, "sgd");
  const std::vector<RankResult> whole = RunGroup(2, execution, Trial(params), data, options_);
  std::filesystem::remove(options_.checkpoint_path);

  // 600 samples in batches of 32: 19 steps per epoch; rank 0 asks before step 25 (epoch 2, step 6).
  const std::vector<RankResult> first =
      RunGroup<InterruptingGate<0, 25>>(2, execution, Trial(params), data, options_);
  for (const RankResult& rank : first) {
    ASSERT_TRUE(rank.status.ok()) << rank.status.message();
    EXPECT_EQ(rank.outcome.status, TrialStatus::kRunning);
    EXPECT_EQ(rank.outcome.message, "interrupted at epoch 2 step 6; checkpoint saved");
  }
  TrainOptions resume = options_;
  resume.resume = true;
  const std::vector<RankResult> second = RunGroup(2, execution, Trial(params), data, resume);
  for (const RankResult& rank : second) {
    ASSERT_TRUE(rank.status.ok()) << rank.status.message();
    EXPECT_EQ(rank.outcome.status, TrialStatus::kCompleted);
    EXPECT_EQ(rank.outcome.resumed_epochs, 1);
    EXPECT_EQ(rank.outcome.resumed_step, 6);
    ExpectSameCurves(whole[0].outcome.curve, rank.outcome.curve);
  }
  ExpectSameWeights(whole[0].model, second[0].model);
}

TEST_F(CheckpointTest, AnotherTrialsOrAnUnreadableCheckpointIsNotUsed) {
  const testing::ClassifierTaskSpec execution = SyntheticExecution(300);
  const TaskData data = LoadOrDie(execution);
  options_.epochs = 2;
  RunGroup<InterruptingGate<1, 0>>(1, execution, Trial(Params(0.05, 32, "sgd")), data, options_);
  ASSERT_TRUE(std::filesystem::exists(options_.checkpoint_path));
  TrainOptions resume = options_;
  resume.resume = true;
  std::vector<RankResult> other =
      RunGroup(1, execution, Trial(Params(0.01, 32, "sgd")), data, resume);
  EXPECT_EQ(other[0].outcome.resumed_epochs, 0);
  EXPECT_EQ(other[0].outcome.curve.size(), 2u);

  std::ofstream(options_.checkpoint_path, std::ios::trunc) << "not a checkpoint";
  std::vector<RankResult> damaged =
      RunGroup(2, execution, Trial(Params(0.05, 32, "sgd")), data, resume);
  for (const RankResult& rank : damaged) {
    EXPECT_EQ(rank.outcome.status, TrialStatus::kCompleted);
    EXPECT_EQ(rank.outcome.resumed_epochs, 0);
    EXPECT_EQ(rank.outcome.curve.size(), 2u);
  }
}

// Population-based training: a child starts from a copy of its parent's checkpoint at
// parent_epoch (model and optimizer state), trains the epochs after it with its own
// hyperparameters, and its curve holds only its own epochs.
TEST_F(CheckpointTest, AChildContinuesFromItsParentsCheckpointWithItsOwnHyperparameters) {
  const testing::ClassifierTaskSpec execution = SyntheticExecution(600);
  const TaskData data = LoadOrDie(execution);
  const Assignment params = Params(0.05, 32, "adam");
  const std::vector<RankResult> whole = RunGroup(1, execution, Trial(params), data, options_);
  ASSERT_EQ(whole[0].outcome.status, TrialStatus::kCompleted);
  std::filesystem::remove(options_.checkpoint_path);
  const std::vector<RankResult> parent =
      RunGroup<InterruptingGate<2, 0>>(1, execution, Trial(params), data, options_);
  ASSERT_EQ(parent[0].outcome.status, TrialStatus::kRunning);
  const std::filesystem::path parent_checkpoint = dir_ / "parent.pt";
  std::filesystem::copy_file(options_.checkpoint_path, parent_checkpoint);

  // Same seed and hyperparameters as the parent: the child's epochs 3 and 4 are the parent's.
  TrainOptions child_options = options_;
  child_options.resume = true;
  TrialSpec same = Trial(params);
  same.trial_id = 9;
  same.parent_trial = 4;
  same.parent_epoch = 2;
  const std::vector<RankResult> twin = RunGroup(1, execution, same, data, child_options);
  ASSERT_TRUE(twin[0].status.ok()) << twin[0].status.message();
  EXPECT_EQ(twin[0].outcome.status, TrialStatus::kCompleted);
  EXPECT_EQ(twin[0].outcome.resumed_epochs, 2);
  ASSERT_EQ(twin[0].outcome.curve.size(), 2u);
  EXPECT_EQ(twin[0].outcome.curve[0].epoch, 3);
  ExpectSameCurves({whole[0].outcome.curve[2], whole[0].outcome.curve[3]}, twin[0].outcome.curve);
  ExpectSameWeights(whole[0].model, twin[0].model);

  // Another learning rate applies from epoch 3 (the parent's, in its optimizer state, does not).
  std::filesystem::copy_file(parent_checkpoint, options_.checkpoint_path,
                             std::filesystem::copy_options::overwrite_existing);
  TrialSpec explored = Trial(Params(0.002, 32, "adam"));
  explored.trial_id = 9;
  explored.parent_trial = 4;
  explored.parent_epoch = 2;
  const std::vector<RankResult> child = RunGroup(1, execution, explored, data, child_options);
  EXPECT_EQ(child[0].outcome.resumed_epochs, 2);
  ASSERT_EQ(child[0].outcome.curve.size(), 2u);
  EXPECT_NE(child[0].outcome.curve[0].values[0], whole[0].outcome.curve[2].values[0]);

  // The parent's checkpoint at another epoch is not used: the child starts from the beginning.
  std::filesystem::copy_file(parent_checkpoint, options_.checkpoint_path,
                             std::filesystem::copy_options::overwrite_existing);
  explored.parent_epoch = 1;
  const std::vector<RankResult> mismatched = RunGroup(1, execution, explored, data, child_options);
  EXPECT_EQ(mismatched[0].outcome.resumed_epochs, 0);
  EXPECT_EQ(mismatched[0].outcome.curve.size(), 4u);
}

// The synthetic task's sgd trial (lr 0.05, batch 32) of `epochs` epochs on `ranks` ranks, with
// `hooks` before every step.
std::vector<RankResult> RunWithHooks(int ranks, int64_t epochs, TrainingHooks* hooks) {
  const testing::ClassifierTaskSpec execution = SyntheticExecution();
  const TaskData data = LoadOrDie(execution);
  TrainOptions options;
  options.epochs = epochs;
  options.hooks = hooks;
  return RunGroup(ranks, execution, Trial(Params(0.05, 32, "sgd")), data, options);
}

TEST(TrainerFaultTest, AnExceptionOnOneRankFailsTheTrialOnEveryRank) {
  FaultInjector exception({Fault::Kind::kException, 4, 2, 1});
  std::vector<RankResult> results = RunWithHooks(2, 3, &exception);
  for (const RankResult& rank : results) {
    ASSERT_TRUE(rank.status.ok()) << rank.status.message();
    EXPECT_EQ(rank.outcome.status, TrialStatus::kFailed);
    EXPECT_EQ(rank.outcome.message,
              "exception at epoch 2 step 1 on rank 1: injected fault (HPO_INJECT_FAULT)");
    EXPECT_EQ(rank.outcome.curve.size(), 1u);
  }
  FaultInjector out_of_memory({Fault::Kind::kOutOfMemory, 4, 1, 0});
  results = RunWithHooks(3, 3, &out_of_memory);
  for (const RankResult& rank : results) {
    EXPECT_EQ(rank.outcome.status, TrialStatus::kFailed);
    EXPECT_EQ(rank.outcome.message.rfind("exception at epoch 1 step 1 on rank 0: out of memory", 0),
              0u)
        << rank.outcome.message;
  }
}

// A CUDA error leaves the process's CUDA context broken: the trainer lets it through (the runtime
// ends the job with it) rather than failing the trial and training the next one on a dead GPU.
TEST(TrainerFaultTest, ACudaErrorEndsTheRunInsteadOfFailingTheTrial) {
  FaultInjector cuda({Fault::Kind::kCuda, 4, 2, 0});
  try {
    RunWithHooks(1, 3, &cuda);
    ADD_FAILURE() << "the trial ended instead of the run";
  } catch (const std::runtime_error& error) {
    EXPECT_EQ(std::string(error.what()),
              "CUDA error: an illegal memory access was encountered (HPO_INJECT_FAULT) at epoch 2 "
              "step 1 on rank 0: the GPU is unusable to this process after a CUDA error, so the "
              "job ends; `hpo sweep --resume` runs the trial again");
  }
}

// CUDA's out of memory is not sticky: only its trial fails, as on the host.
TEST(TrainerFaultTest, ACudaOutOfMemoryFailsOnlyTheTrial) {
  struct CudaOutOfMemory final : TrainingHooks {
    void BeforeStep(const TrialSpec&, int, int64_t epoch, int64_t step) override {
      if (epoch == 1 && step == 0) {
        throw c10::Error(c10::SourceLocation{__func__, __FILE__, static_cast<uint32_t>(__LINE__)},
                         "CUDA error: out of memory");
      }
    }
  } hooks;
  const std::vector<RankResult> results = RunWithHooks(1, 2, &hooks);
  EXPECT_EQ(results[0].outcome.status, TrialStatus::kFailed);
  EXPECT_EQ(results[0].outcome.message,
            "exception at epoch 1 step 1 on rank 0: CUDA error: out of memory");
}

}  // namespace
}  // namespace hpo
