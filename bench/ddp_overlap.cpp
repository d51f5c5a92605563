// The DDP step with and without overlapping the gradient allreduce with backward: the fashion_mnist
// CNN (width --width, dropout 0, adam lr 1e-3) trained by every rank of the world as one group on
// random batches (global batch --batch, each rank its share), stepped by hand as the trainer does:
// zero_grad, forward, backward, gradient allreduce, optimizer step. Run under mpirun:
//   mpirun -np N hpo_bench_ddp_overlap [--width W] [--batch B] [--steps S] [--reps R]
//                                      [--bucket-kb K] [--first-bucket-kb F]
// Three modes, interleaved R times in one run so that they see the same machine noise, each from
// the same initial weights over the same batches, S timed steps after 5 warm-up steps:
//   before:  allreduce after backward, 4 MiB buckets (the trainer before overlap existed);
//   after:   allreduce after backward, buckets of K KiB (first F KiB);
//   overlap: the same buckets started by gradient hooks during backward; FinishStep after it.
// Per mode (medians over steps, then over repetitions, on rank 0; every step ends in a collective,
// so ranks move in lockstep): step_ms, samples_per_s = B / step time, backward_ms (forward and
// backward, hooks included), reduce_ms (after backward until the gradients are summed:
// AllreduceGradients, or FinishStep for overlap) and, for overlap, wait_ms (the part of FinishStep
// spent in Wait). hidden = 1 - reduce_ms(overlap) / reduce_ms(after): the share of the
// allreduce time that backward hid.
// Check: after each repetition, every rank's weights equal rank 0's bit for bit, and the overlap
// and after modes' weights agree within 1e-5 (relative) with each other.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "harness.hpp"
#include "hpo/mpi/communicator.hpp"
#include "mpi/mpi_collectives.hpp"
#include "mpi_harness.hpp"
#include "tasks/fashion_mnist/model_runtime/task.hpp"
#include "train/gradient_buckets.hpp"

namespace {

constexpr int kWarmupSteps = 5;
constexpr int kBatchPool = 8;  // distinct batches, cycled

struct Options {
  int64_t width = 16;
  int64_t batch = 128;
  int64_t steps = 40;
  int64_t reps = 3;
  int64_t bucket_kb = 25 << 10;
  int64_t first_bucket_kb = 1 << 10;
};

bool ParseOptions(int argc, char** argv, Options* options) {
  return hpo::bench::ParseIntegerFlags(argc, argv,
                                       {{"--width", {&options->width, 1}},
                                        {"--batch", {&options->batch, 1}},
                                        {"--steps", {&options->steps, 1}},
                                        {"--reps", {&options->reps, 1}},
                                        {"--bucket-kb", {&options->bucket_kb, 1}},
                                        {"--first-bucket-kb", {&options->first_bucket_kb, 1}}});
}

enum class Mode { kBefore, kAfter, kOverlap };
const char* ModeName(Mode mode) {
  return mode == Mode::kBefore ? "before" : (mode == Mode::kAfter ? "after" : "overlap");
}

struct ModeTimes {
  double step_s = 0, backward_s = 0, reduce_s = 0, wait_s = 0;
};

struct StepBatch {
  torch::Tensor inputs, labels;
};

// Trains from the seed-42 initial weights over `batches`; returns the medians and the weights.
ModeTimes RunMode(Mode mode, const Options& options, const std::vector<StepBatch>& batches,
                  hpo::GroupCollectives& collectives, torch::Tensor* weights) {
  torch::manual_seed(42);
  torch::nn::Sequential model =
      hpo::BuildFashionCnn(options.width, /*dropout=*/0.0, /*classes=*/10);
  model->train();
  std::vector<torch::Tensor> parameters = model->parameters();
  const size_t bucket_bytes =
      mode == Mode::kBefore ? size_t{4} << 20 : static_cast<size_t>(options.bucket_kb) << 10;
  const size_t first_bytes =
      mode == Mode::kBefore ? 0 : static_cast<size_t>(options.first_bucket_kb) << 10;
  hpo::GradientBuckets buckets(parameters, bucket_bytes, 1, first_bytes);
  torch::optim::Adam optimizer(parameters, torch::optim::AdamOptions(1e-3));
  const float scale = 1.0f / static_cast<float>(collectives.size());
  std::vector<double> step_s, backward_s, reduce_s, wait_s;
  for (int64_t step = 0; step < kWarmupSteps + options.steps; ++step) {
    const StepBatch& batch = batches[static_cast<size_t>(step) % batches.size()];
    const double start = hpo::bench::NowSeconds();
    optimizer.zero_grad();
    if (mode == Mode::kOverlap) buckets.BeginStep(collectives, scale);
    const torch::Tensor loss =
        torch::nn::functional::cross_entropy(model->forward(batch.inputs), batch.labels);
    loss.backward();
    float extra = loss.item<float>() * scale;
    const double backward_done = hpo::bench::NowSeconds();
    const double waited_before = buckets.overlap_stats().wait_s;
    if (mode == Mode::kOverlap) {
      buckets.FinishStep(&extra);
    } else {
      buckets.AllreduceGradients(collectives, scale, &extra);
    }
    const double reduced = hpo::bench::NowSeconds();
    optimizer.step();
    if (step < kWarmupSteps) continue;
    step_s.push_back(hpo::bench::NowSeconds() - start);
    backward_s.push_back(backward_done - start);
    reduce_s.push_back(reduced - backward_done);
    wait_s.push_back(buckets.overlap_stats().wait_s - waited_before);
  }
  std::vector<torch::Tensor> flat;
  for (const torch::Tensor& p : parameters) flat.push_back(p.detach().reshape(-1));
  *weights = torch::cat(flat);
  ModeTimes times;
  times.step_s = hpo::bench::Summarize(step_s).p50;
  times.backward_s = hpo::bench::Summarize(backward_s).p50;
  times.reduce_s = hpo::bench::Summarize(reduce_s).p50;
  times.wait_s = hpo::bench::Summarize(wait_s).p50;
  return times;
}

double Median(std::vector<double> values) { return hpo::bench::Summarize(std::move(values)).p50; }

}  // namespace

int main(int argc, char** argv) {
  using namespace hpo;
  std::unique_ptr<MpiSession> session;
  if (!MpiSession::Start(&argc, &argv, &session).ok()) return 1;
  const Communicator world = Communicator::World();
  Options options;
  if (!ParseOptions(argc, argv, &options) || options.batch < world.size()) {
    if (world.rank() == 0) {
      std::fprintf(stderr,
                   "usage: hpo_bench_ddp_overlap [--width W] [--batch B >= ranks] [--steps S] "
                   "[--reps R] [--bucket-kb K] [--first-bucket-kb F] (every value >= 1)\n");
    }
    return 2;
  }
  torch::set_num_threads(1);
  MpiGroupCollectives collectives(world);
  const int64_t local =
      options.batch / world.size() + (world.rank() < options.batch % world.size());
  torch::manual_seed(7 + static_cast<uint64_t>(world.rank()));
  std::vector<StepBatch> batches;
  for (int i = 0; i < kBatchPool; ++i) {
    batches.push_back({torch::randn({local, 1, 28, 28}), torch::randint(0, 10, {local})});
  }

  const Mode modes[] = {Mode::kBefore, Mode::kAfter, Mode::kOverlap};
  std::vector<ModeTimes> runs[3];
  bool check = true;
  for (int64_t rep = 0; rep < options.reps; ++rep) {
    torch::Tensor weights[3];
    for (int m = 0; m < 3; ++m)
      runs[m].push_back(RunMode(modes[m], options, batches, collectives, &weights[m]));
    for (int m = 0; m < 3; ++m) {
      torch::Tensor leaders = weights[m].clone();
      collectives.Broadcast(leaders.data_ptr<float>(), leaders.numel() * sizeof(float), 0);
      check = check && torch::equal(leaders, weights[m]);
    }
    check = check && torch::allclose(weights[2], weights[1], 1e-5, 1e-6);
  }
  check = bench::OnEveryRank(world.get(), check);
  if (world.rank() != 0) return check ? 0 : 1;

  double reduce_after = 0.0;
  for (int m = 0; m < 3; ++m) {
    std::vector<double> step, backward, reduce, wait;
    for (const ModeTimes& t : runs[m]) {
      step.push_back(t.step_s);
      backward.push_back(t.backward_s);
      reduce.push_back(t.reduce_s);
      wait.push_back(t.wait_s);
    }
    const double step_s = Median(step);
    const double reduce_s = Median(reduce);
    if (modes[m] == Mode::kAfter) reduce_after = reduce_s;
    bench::Fields fields = {
        {"mode", ModeName(modes[m])},
        {"ranks", std::to_string(world.size())},
        {"width", std::to_string(options.width)},
        {"batch", std::to_string(options.batch)},
        {"bucket_kb",
         modes[m] == Mode::kBefore ? std::string("4096") : std::to_string(options.bucket_kb)},
        {"first_bucket_kb",
         modes[m] == Mode::kBefore ? std::string("4096") : std::to_string(options.first_bucket_kb)},
        {"step_ms", bench::Number(step_s * 1e3)},
        {"samples_per_s", bench::Number(options.batch / step_s)},
        {"backward_ms", bench::Number(Median(backward) * 1e3)},
        {"reduce_ms", bench::Number(reduce_s * 1e3)}};
    if (modes[m] == Mode::kOverlap) {
      fields.push_back({"wait_ms", bench::Number(Median(wait) * 1e3)});
      fields.push_back(
          {"hidden", bench::Number(reduce_after > 0 ? 1.0 - reduce_s / reduce_after : 0.0, 3)});
    }
    bench::PrintResult("ddp_overlap", fields, check);
  }
  return check ? 0 : 1;
}
