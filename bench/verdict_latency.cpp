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
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench_sweep.hpp"
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

struct Options {
  std::string mode = "aside";  // or "inline"
  int64_t observations = 1000;
  int64_t new_trials = 40;
  std::string model = "gp";
};

constexpr int kEpochs = 20;
constexpr double kEpochSeconds = 0.005;

// One rank's waits on rank 0, in milliseconds.
struct Waits {
  std::vector<double> verdict_ms;  // epoch report -> verdict
  std::vector<double> request_ms;  // request -> trial
};

// Leads a group of one through trials of kEpochs epochs of kEpochSeconds until there are no
// more, timing every exchange with rank 0.
Waits RunTrials(const SweepConfig& config, SweepSession* sweep, int rank) {
  LeaderChannel channel(sweep->control());
  Waits waits;
  std::mt19937_64 rng(static_cast<uint64_t>(rank) + 1);
  std::uniform_real_distribution<double> noise(0.0, 1.0);
  for (;;) {
    ControlMessage request;
    request.kind = MessageKind::kRequestTrial;
    double began = bench::NowSeconds();
    const ControlMessage assignment = channel.Exchange(request);
    waits.request_ms.push_back((bench::NowSeconds() - began) * 1e3);
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
      waits.verdict_ms.push_back((bench::NowSeconds() - began) * 1e3);
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
  return waits;
}

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<MpiSession> session;
  if (!MpiSession::Start(&argc, &argv, &session).ok()) return 1;
  Options options;
  if (argc > 1) options.mode = argv[1];
  if (argc > 2) options.observations = std::stoll(argv[2]);
  if (argc > 3) options.new_trials = std::stoll(argv[3]);
  if (argc > 4) options.model = argv[4];

  const Communicator world = Communicator::World();
  const SweepConfig config = bench::ParseBenchConfig(
      kConfig, "verdict_latency.yaml",
      {{"RUN_CAP", std::to_string(options.observations + options.new_trials)},
       {"MODEL", options.model}});
  const GroupLayout layout = bench::BenchLayout(world, 1);
  const std::filesystem::path folder = bench::BenchFolder("verdict");
  SweepSession sweep(world, layout);
  if (world.rank() == 0) {
    bench::CoordinateOnRoot(config, folder, &sweep, [&](std::unique_ptr<Searcher> searcher) {
      if (options.mode != "inline") return searcher;
      return std::unique_ptr<Searcher>(std::make_unique<InlineSearcher>(std::move(searcher)));
    });
    bench::EndJobUnlessOk(sweep.coordinator().Restore(WarmStudy(config, options.observations)));
  }
  sweep.Start();

  MPI_Barrier(world.get());
  const double start = bench::NowSeconds();
  const Waits waits = RunTrials(config, &sweep, world.rank());
  MPI_Barrier(world.get());
  const double elapsed = bench::NowSeconds() - start;
  const bench::Summary verdicts = bench::Summarize(bench::GatherOnRoot(world, waits.verdict_ms));
  const bench::Summary requests = bench::Summarize(bench::GatherOnRoot(world, waits.request_ms));
  sweep.Join();
  if (world.rank() == 0) {
    std::printf(
        "mode %s, model %s, %lld observations, %lld new trials on %d groups, %.1f s\n"
        "  epoch report -> verdict (%zu): p50 %.3f ms, p99 %.3f ms, max %.1f ms\n"
        "  request -> trial (%zu):       p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
        options.mode.c_str(), options.model.c_str(), static_cast<long long>(options.observations),
        static_cast<long long>(options.new_trials), layout.num_groups, elapsed, verdicts.count,
        verdicts.p50, verdicts.p99, verdicts.max, requests.count, requests.p50, requests.p99,
        requests.max);
    std::filesystem::remove_all(folder);
  }
  return 0;
}
