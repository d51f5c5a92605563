// DDP training throughput: training samples per second of one fashion_mnist trial (adam, lr 1e-3,
// width 16, dropout 0, global batch --batch) trained data-parallel by every rank of the world as
// one trial group, each rank with --threads torch/OpenBLAS intra-op threads. Run under mpirun:
//   mpirun -np N hpo_bench_ddp [--threads T] [--train-samples N] [--epochs E] [--batch B]
//                              [--prefetch P]
// --prefetch is TrainOptions::prefetch_batches (default 1; 0 assembles batches on the training
// thread).
// What is timed: first an untimed 1-epoch warm-up trial on the first 2048 training samples (thread
// pools, allocator, first-touch pages); then the timed trial of E epochs over N samples.
//   samples_per_s = N x E / train_time_s,  train_time_s = sum(epoch_time_s) - E x val_time_s
// where epoch_time_s is the trainer's metric (the slowest rank's time for the epoch's training
// steps, gradient allreduces, BatchNorm buffer sync and validation) and val_time_s is the slowest
// rank's median time, over 3 runs on the trained model, to evaluate its shard of the validation
// split as the trainer does (batches of 1024, no grad, loss and argmax), so only training remains.
// samples_per_s_per_core divides by ranks x threads.
// Check: the trial completed all E epochs, every loss is finite and the last val_accuracy > 0.6.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "harness.hpp"
#include "hpo/mpi/communicator.hpp"
#include "hpo/task_catalog.hpp"
#include "mpi/mpi_collectives.hpp"
#include "mpi_harness.hpp"
#include "tasks/classifier_description.hpp"
#include "tasks/fashion_mnist/model_runtime/task.hpp"
#include "train/batch_prefetcher.hpp"
#include "train/distributed_sampler.hpp"
#include "train/trainer.hpp"

namespace {

using namespace hpo;

constexpr int64_t kWarmupSamples = 2048;
constexpr int64_t kValidationSamples = 1000;
constexpr int64_t kEvalBatch = 1024;  // as the trainer evaluates
constexpr int kValidationRepeats = 3;
constexpr double kMinValAccuracy = 0.6;

struct Options {
  int64_t threads = 1;
  int64_t train_samples = 20000;
  int64_t epochs = 1;
  int64_t batch = 128;
  int64_t prefetch = 1;
};

// Parses "--name VALUE" pairs; false on anything else or a value < 1 (< 0 for --prefetch).
bool ParseOptions(int argc, char** argv, Options* options) {
  return hpo::bench::ParseIntegerFlags(argc, argv,
                                       {{"--threads", {&options->threads, 1}},
                                        {"--train-samples", {&options->train_samples, 1}},
                                        {"--epochs", {&options->epochs, 1}},
                                        {"--batch", {&options->batch, 1}},
                                        {"--prefetch", {&options->prefetch, 0}}});
}

// The position of metric `name` in EpochMetrics::values.
size_t MetricIndex(const std::string& name) {
  const std::vector<std::string>& names = hpo::ClassifierMetricNames();
  return static_cast<size_t>(std::find(names.begin(), names.end(), name) - names.begin());
}

// This rank's median time to evaluate its shard of `split`, as the trainer does after each epoch.
double TimeValidation(hpo::TrainableModel& model, const hpo::LabeledTensors& split,
                      hpo::IndexRange range) {
  torch::NoGradGuard no_grad;
  model.SetTraining(false);
  std::vector<double> times;
  for (int repeat = 0; repeat < kValidationRepeats; ++repeat) {
    const double start = hpo::bench::NowSeconds();
    for (int64_t begin = range.begin; begin < range.end; begin += kEvalBatch) {
      const int64_t length = std::min(kEvalBatch, range.end - begin);
      hpo::Batch batch;
      batch.inputs = {split.inputs.narrow(0, begin, length)};
      const torch::Tensor logits = model.Forward(batch);
      const torch::Tensor labels = split.labels.narrow(0, begin, length);
      torch::nn::functional::cross_entropy(
          logits, labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
          .item<double>();
      logits.argmax(1).eq(labels).sum().item<double>();
    }
    times.push_back(hpo::bench::NowSeconds() - start);
  }
  return hpo::bench::Summarize(times).p50;
}

// This rank's mean time per step to assemble its training batch (what the prefetcher moves off
// the training thread), over one epoch of the trial's data order.
double TimeBatchAssembly(const hpo::LabeledTensors& split, int64_t batch, int rank, int size) {
  const hpo::TensorDataset train({split.inputs}, split.labels);
  hpo::DistributedSampler sampler(train.size(), batch, 42, rank, size);
  sampler.SetEpoch(1);
  const double start = hpo::bench::NowSeconds();
  for (int64_t step = 0; step < sampler.num_steps(); ++step) {
    train.Gather(torch::tensor(sampler.LocalIndices(step), torch::kInt64));
  }
  return (hpo::bench::NowSeconds() - start) / static_cast<double>(sampler.num_steps());
}

// Trains the fixed trial on DATA for options.epochs epochs, after one warm-up epoch on its first
// kWarmupSamples images (so that start-up costs stay out of the timed epochs).
Status TrainTimed(const Options& options, const TaskData& data, const Communicator& world,
                  TrialOutcome* outcome, std::unique_ptr<TrainableModel>* model) {
  TrialSpec trial;
  trial.trial_id = 0;
  trial.seed = 42;
  trial.params = {{"optimizer", std::string("adam")},
                  {"lr", 1e-3},
                  {"batch_size", options.batch},
                  {"width", int64_t{16}},
                  {"dropout", 0.0}};
  MpiGroupCollectives collectives(world);
  AlwaysContinue gate;

  TaskData warmup_data = data;
  const int64_t warmup_samples = std::min(kWarmupSamples, data.train.size());
  warmup_data.train.inputs = data.train.inputs.narrow(0, 0, warmup_samples);
  warmup_data.train.labels = data.train.labels.narrow(0, 0, warmup_samples);
  TrainOptions warmup_options;
  warmup_options.epochs = 1;
  warmup_options.prefetch_batches = options.prefetch;
  TrialOutcome warmup;
  const std::unique_ptr<TensorClassifier> warmup_task = MakeFashionMnistClassifier(warmup_data);
  const Status warmed = RunTrial(ClassifierSetup(warmup_task.get(), options.threads), trial,
                                 collectives, gate, warmup_options, &warmup);
  if (!warmed.ok()) return warmed;

  TrainOptions train_options;
  train_options.epochs = options.epochs;
  train_options.prefetch_batches = options.prefetch;
  const std::unique_ptr<TensorClassifier> task = MakeFashionMnistClassifier(data);
  return RunTrial(ClassifierSetup(task.get(), options.threads), trial, collectives, gate,
                  train_options, outcome, model);
}

// Whether the trial completed every epoch with finite losses and learned (val_accuracy above
// kMinValAccuracy); sums its epoch times into *epochs_time_s and reads its last val_accuracy.
bool CheckOutcome(const Options& options, const TrialOutcome& outcome, double* epochs_time_s,
                  double* val_accuracy) {
  if (outcome.status != TrialStatus::kCompleted ||
      static_cast<int64_t>(outcome.curve.size()) != options.epochs) {
    return false;
  }
  bool finite = true;
  for (const EpochMetrics& epoch : outcome.curve) {
    *epochs_time_s += epoch.values[MetricIndex("epoch_time_s")];
    finite = finite && std::isfinite(epoch.values[MetricIndex("train_loss")]) &&
             std::isfinite(epoch.values[MetricIndex("val_loss")]);
  }
  *val_accuracy = outcome.curve.back().values[MetricIndex("val_accuracy")];
  return finite && *val_accuracy > kMinValAccuracy;
}

// Rank 0: the result line. VAL_TIME_S is one validation pass, which every epoch's time holds.
void PrintRun(const Options& options, const Communicator& world, const TaskData& data,
              double epochs_time_s, double val_time_s, double val_accuracy, double assembly_s,
              bool check) {
  const double train_time_s = epochs_time_s - static_cast<double>(options.epochs) * val_time_s;
  const double samples_per_s =
      static_cast<double>(data.train.size() * options.epochs) / train_time_s;
  const int64_t cores = world.size() * options.threads;
  const int64_t steps_per_epoch = (data.train.size() + options.batch - 1) / options.batch;
  bench::PrintResult(
      "ddp_throughput",
      {{"ranks", std::to_string(world.size())},
       {"threads_per_rank", std::to_string(options.threads)},
       {"batch", std::to_string(options.batch)},
       {"prefetch", std::to_string(options.prefetch)},
       {"train_samples", std::to_string(data.train.size())},
       {"epochs", std::to_string(options.epochs)},
       {"train_time_s", bench::Number(train_time_s)},
       {"val_time_s", bench::Number(val_time_s)},
       {"samples_per_s", bench::Number(samples_per_s)},
       {"samples_per_s_per_core", bench::Number(samples_per_s / cores)},
       {"val_accuracy", bench::Number(val_accuracy)},
       {"batch_assembly_ms_per_step", bench::Number(1e3 * assembly_s)},
       {"step_ms",
        bench::Number(1e3 * train_time_s / static_cast<double>(options.epochs * steps_per_epoch))}},
      check);
}

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<MpiSession> session;
  if (!MpiSession::Start(&argc, &argv, &session).ok()) return 1;
  const Communicator world = Communicator::World();
  Options options;
  if (!ParseOptions(argc, argv, &options)) {
    if (world.rank() == 0) {
      std::fprintf(stderr,
                   "usage: hpo_bench_ddp [--threads T] [--train-samples N] [--epochs E] "
                   "[--batch B] [--prefetch P] (every value >= 1, P >= 0)\n");
    }
    return 2;
  }

  FashionMnistOptions fashion;
  fashion.validation_samples = kValidationSamples;
  fashion.train_samples = options.train_samples;
  TaskData data;
  Status loaded = LoadFashionMnist(fashion, &data);
  if (!loaded.ok()) AbortJob(loaded.exit_code(), loaded.message());

  TrialOutcome outcome;
  std::unique_ptr<TrainableModel> model;
  const Status trained = TrainTimed(options, data, world, &outcome, &model);
  double epochs_time_s = 0.0;
  double val_accuracy = 0.0;
  const bool check = trained.ok() && CheckOutcome(options, outcome, &epochs_time_s, &val_accuracy);
  // Collective on every rank whatever the outcome, so no rank waits alone.
  const double val_time_s = bench::SlowestRank(
      world.get(), trained.ok() ? TimeValidation(*model, data.validation,
                                                 ShardOf({0, data.validation.size()}, world.rank(),
                                                         world.size()))
                                : 0.0);
  const double assembly_s = bench::SlowestRank(
      world.get(), TimeBatchAssembly(data.train, options.batch, world.rank(), world.size()));

  if (world.rank() != 0) return 0;
  if (!trained.ok()) std::fprintf(stderr, "hpo_bench_ddp: %s\n", trained.message().c_str());
  if (outcome.status != TrialStatus::kCompleted) {
    std::fprintf(stderr, "hpo_bench_ddp: trial %s: %s\n", TrialStatusName(outcome.status),
                 outcome.message.c_str());
  }
  PrintRun(options, world, data, epochs_time_s, val_time_s, val_accuracy, assembly_s, check);
  return check ? 0 : 1;
}
