// How long a group waits for rank 0's verdict on an epoch while model-based suggestions are being
// computed. Run under mpirun:
//   mpirun -np 4 hpo_bench_verdict_latency [aside|inline] [OBSERVATIONS] [TRIALS] [MODEL]
// Rank 0 serves a coordinator whose searcher (method bayes, MODEL gp or tpe, default gp) already
// holds OBSERVATIONS finished trials (default 1,000); every rank leads a group of one that runs
// TRIALS new trials between them (default 40), each 20 epochs of 5 ms, and times every exchange
// with rank 0: epoch report to verdict, and request to trial (which includes a suggestion).
// `aside` (the coordinator's way) computes suggestions on the coordinator's worker thread;
// `inline` hides StartSuggestion from the coordinator, so every suggestion is computed on its
// message loop, as before suggestions moved off it. Prints p50 / p99 / max of both waits.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "bench_study.hpp"
#include "coord/coordinator.hpp"
#include "harness.hpp"
#include "hpo/config.hpp"
#include "hpo/mpi/communicator.hpp"
#include "hpo/mpi/group_layout.hpp"
#include "mpi/control_plane.hpp"
#include "runtime/sweep_session.hpp"
#include "search/searcher.hpp"
#include "study/study_file.hpp"

namespace {

using namespace hpo;

constexpr const char* kConfig = R"(sweep:
  method: bayes
  metric: {name: val_loss, goal: minimize}
  run_cap: RUN_CAP
  parameters:
    lr: {distribution: log_uniform_values, min: 0.0001, max: 0.1}
    momentum: {distribution: uniform, min: 0.0, max: 0.99}
    width: {distribution: int_uniform, min: 8, max: 64}
    optimizer: {values: [sgd, adam, adamw]}
search: {model: MODEL, startup_trials: 10}
task: synthetic
)";

// Forwards everything but StartSuggestion, so that the coordinator computes every suggestion on
// its own thread (Suggest through FinishSuggestion's default).
class InlineSearcher final : public Searcher {
 public:
  explicit InlineSearcher(std::unique_ptr<Searcher> inner) : inner_(std::move(inner)) {}
  std::optional<Assignment> Suggest(int64_t trial_id) override { return inner_->Suggest(trial_id); }
  void Observe(int64_t trial_id, const Assignment& params, TrialStatus status,
               double objective) override {
    inner_->Observe(trial_id, params, status, objective);
  }
  void ObserveEpoch(int64_t trial_id, const Assignment& params, int64_t epoch,
                    double objective) override {
    inner_->ObserveEpoch(trial_id, params, epoch, objective);
  }
  std::optional<int64_t> SpaceSize() const override { return inner_->SpaceSize(); }
  std::string SaveState() const override { return inner_->SaveState(); }
  Status RestoreState(const std::string& state) override { return inner_->RestoreState(state); }

 private:
  std::unique_ptr<Searcher> inner_;
};

std::string Hex(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char byte : bytes) {
    hex.push_back(kDigits[byte >> 4]);
    hex.push_back(kDigits[byte & 15]);
  }
  return hex;
}

// A study of `count` finished trials at random points with a smooth objective, as Restore reads
// it: the rows and the searcher's state after observing them.
StudyContents WarmStudy(const SweepConfig& config, int64_t count) {
  SweepConfig random_config = config;
  random_config.sweep.method = SearchMethod::kRandom;
  std::unique_ptr<Searcher> random;
  std::unique_ptr<Searcher> model;
  if (!MakeSearcher(random_config, &random).ok() || !MakeSearcher(config, &model).ok()) {
    AbortJob(ExitCode::kFailure, "cannot make the searchers");
  }
  StudyContents study;
  for (int64_t id = 0; id < count; ++id) {
    TrialResult trial;
    trial.trial_id = id;
    trial.params = *random->Suggest(id);
    trial.status = TrialStatus::kCompleted;
    const double lr = std::get<double>(*FindParam(trial.params, "lr"));
    const double momentum = std::get<double>(*FindParam(trial.params, "momentum"));
    trial.objective = std::pow(std::log10(lr) + 2.5, 2) + std::pow(momentum - 0.9, 2);
    trial.curve = {{1, std::vector<double>(config.metric_names.size(), trial.objective)}};
    trial.epochs = 1;
    model->Observe(id, trial.params, trial.status, trial.objective);
    study.trials.push_back(std::move(trial));
  }
  study.extra_attributes["searcher_state"] = Hex(model->SaveState());
  return study;
}

struct Percentiles {
  double p50 = 0, p99 = 0, max = 0;
  size_t count = 0;
};

Percentiles Summarize(std::vector<double> values) {
  Percentiles result;
  result.count = values.size();
  if (values.empty()) return result;
  std::sort(values.begin(), values.end());
  const auto at = [&](double q) {
    return values[std::min(values.size() - 1, static_cast<size_t>(q * values.size()))];
  };
  result.p50 = at(0.5);
  result.p99 = at(0.99);
  result.max = values.back();
  return result;
}

// Gathers every rank's samples on rank 0.
std::vector<double> GatherAll(const Communicator& world, const std::vector<double>& mine) {
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<size_t>(world.size()));
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, world.get());
  std::vector<int> offsets(counts.size(), 0);
  int total = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    offsets[i] = total;
    total += counts[i];
  }
  std::vector<double> all(static_cast<size_t>(world.rank() == 0 ? total : 0));
  MPI_Gatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE,
              0, world.get());
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<MpiSession> session;
  if (!MpiSession::Start(&argc, &argv, &session).ok()) return 1;
  const std::string mode = argc > 1 ? argv[1] : "aside";
  const int64_t observations = argc > 2 ? std::stoll(argv[2]) : 1000;
  const int64_t new_trials = argc > 3 ? std::stoll(argv[3]) : 40;
  const std::string model = argc > 4 ? argv[4] : "gp";
  constexpr int kEpochs = 20;
  constexpr double kEpochSeconds = 0.005;

  const Communicator world = Communicator::World();
  std::string text = kConfig;
  text.replace(text.find("RUN_CAP"), 7, std::to_string(observations + new_trials));
  text.replace(text.find("MODEL"), 5, model);
  SweepConfig config;
  Status parsed = ParseConfig(text, "verdict_latency.yaml", &config);
  if (!parsed.ok()) AbortJob(parsed.exit_code(), parsed.message());
  GroupLayout layout;
  Status laid_out = ComputeGroupLayout(world, 1, &layout);
  if (!laid_out.ok()) AbortJob(laid_out.exit_code(), laid_out.message());

  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() / ("hpo-bench-verdict-" + std::to_string(getpid()));
  SweepSession sweep(world, layout);
  if (world.rank() == 0) {
    CoordinatorDeps deps;
    Status made = MakeSearcher(config, &deps.searcher);
    if (!made.ok()) AbortJob(made.exit_code(), made.message());
    if (mode == "inline")
      deps.searcher = std::make_unique<InlineSearcher>(std::move(deps.searcher));
    deps.clock = bench::NowSeconds;
    sweep.Coordinate(config, bench::CreateBenchStudy(config, folder), std::move(deps));
    Status restored = sweep.coordinator().Restore(WarmStudy(config, observations));
    if (!restored.ok()) AbortJob(restored.exit_code(), restored.message());
  }
  sweep.Start();

  MPI_Barrier(world.get());
  const double start = bench::NowSeconds();
  LeaderChannel channel(sweep.control());
  std::vector<double> verdict_ms;
  std::vector<double> request_ms;
  std::mt19937_64 rng(static_cast<uint64_t>(world.rank()) + 1);
  std::uniform_real_distribution<double> noise(0.0, 1.0);
  for (;;) {
    ControlMessage request;
    request.kind = MessageKind::kRequestTrial;
    double began = bench::NowSeconds();
    const ControlMessage assignment = channel.Exchange(request);
    request_ms.push_back((bench::NowSeconds() - began) * 1e3);
    if (assignment.kind == MessageKind::kNoMoreTrials) break;
    std::vector<EpochMetrics> curve;
    for (int epoch = 1; epoch <= kEpochs; ++epoch) {
      std::this_thread::sleep_for(std::chrono::duration<double>(kEpochSeconds));
      ControlMessage report;
      report.kind = MessageKind::kEpochReport;
      report.trial_id = assignment.trial.trial_id;
      report.metrics = {epoch, std::vector<double>(config.metric_names.size(), noise(rng))};
      curve.push_back(report.metrics);
      began = bench::NowSeconds();
      const ControlMessage decision = channel.Exchange(report);
      verdict_ms.push_back((bench::NowSeconds() - began) * 1e3);
      if (!decision.keep_going) break;
    }
    ControlMessage done;
    done.kind = MessageKind::kTrialResult;
    done.result.trial_id = assignment.trial.trial_id;
    done.result.status = TrialStatus::kCompleted;
    done.result.params = assignment.trial.params;
    done.result.curve = std::move(curve);
    channel.Send(done);
  }
  MPI_Barrier(world.get());
  const double elapsed = bench::NowSeconds() - start;
  const Percentiles verdicts = Summarize(GatherAll(world, verdict_ms));
  const Percentiles requests = Summarize(GatherAll(world, request_ms));
  sweep.Join();
  if (world.rank() == 0) {
    std::printf(
        "mode %s, model %s, %lld observations, %lld new trials on %d groups, %.1f s\n"
        "  epoch report -> verdict (%zu): p50 %.3f ms, p99 %.3f ms, max %.1f ms\n"
        "  request -> trial (%zu):       p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
        mode.c_str(), model.c_str(), static_cast<long long>(observations),
        static_cast<long long>(new_trials), layout.num_groups, elapsed, verdicts.count,
        verdicts.p50, verdicts.p99, verdicts.max, requests.count, requests.p50, requests.p99,
        requests.max);
    std::filesystem::remove_all(folder);
  }
  return 0;
}
