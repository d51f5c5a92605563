// Early-stopping decisions as a sweep grows: ASHA (stopping and promotion variants) over N
// trials, each N in 1,000 / 10,000 / 100,000 (or the sizes given):
//   hpo_bench_asha_scale [N ...]
// One sequential sweep per variant and size (rungs 1, 3, 9 of 27 epochs, eta 3): a free slot
// takes a promotable paused trial first (promotion variant), else a new trial, which reports an
// objective per epoch (its quality, drawn once, times a rising curve, plus noise) until it is
// stopped, paused or done. Prints the time per scheduler call (OnEpoch or Promote) over the
// whole sweep and over its last 10 % of trials, and the time to rebuild the state on resume
// (ReplayTrial of every trial's reports). Check: the sweep trained every trial it started and
// the replayed scheduler's state equals the live one's.
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "harness.hpp"
#include "hpo/config.hpp"
#include "sched/scheduler.hpp"

namespace {

constexpr int64_t kEpochs = 27;

std::unique_ptr<hpo::Scheduler> MakeAsha(bool promotion) {
  hpo::SweepConfig config;
  config.sweep.metric.name = "val_accuracy";
  config.sweep.metric.goal = hpo::Goal::kMaximize;
  config.execution.epochs = kEpochs;
  config.sweep.early_terminate.enabled = true;
  config.sweep.early_terminate.min_iter = 1;
  config.sweep.early_terminate.eta = 3;
  config.sweep.early_terminate.promotion = promotion;
  std::unique_ptr<hpo::Scheduler> scheduler;
  if (!hpo::MakeScheduler(config, &scheduler).ok()) std::exit(2);
  return scheduler;
}

struct SweepCost {
  double seconds_per_call = 0.0;
  double seconds_per_call_last_tenth = 0.0;
  double replay_seconds = 0.0;
  bool check = true;
};

SweepCost RunSweep(bool promotion, int64_t trials) {
  std::unique_ptr<hpo::Scheduler> scheduler = MakeAsha(promotion);
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0.0, 0.01);
  std::uniform_real_distribution<double> quality(0.1, 0.9);
  std::vector<double> qualities;
  std::vector<int64_t> trained;  // epochs per trial so far
  std::vector<std::map<int64_t, double>> reports;
  std::vector<hpo::TrialStatus> statuses;
  int64_t calls = 0;
  int64_t calls_last_tenth = 0;
  double seconds_last_tenth = 0.0;
  const double began = hpo::bench::NowSeconds();
  int64_t next_trial = 0;
  while (true) {
    const bool last_tenth = next_trial >= trials - trials / 10;
    const double step_began = hpo::bench::NowSeconds();
    int64_t step_calls = 0;
    std::optional<int64_t> trial;
    if (promotion) {
      trial = scheduler->Promote(/*idle=*/next_trial >= trials);
      ++step_calls;
    }
    if (!trial) {
      if (next_trial >= trials) break;
      trial = next_trial++;
      qualities.push_back(quality(rng));
      trained.push_back(0);
      reports.emplace_back();
      statuses.push_back(hpo::TrialStatus::kRunning);
    }
    const size_t id = static_cast<size_t>(*trial);
    while (true) {
      const int64_t epoch = ++trained[id];
      const double value =
          qualities[id] * (1.0 - std::exp(-static_cast<double>(epoch) / 4.0)) + noise(rng);
      reports[id][epoch] = value;
      const hpo::SchedulerDecision decision = scheduler->OnEpoch(*trial, epoch, value);
      ++step_calls;
      if (decision.pause) {
        statuses[id] = hpo::TrialStatus::kPaused;
        break;
      }
      if (!decision.keep_going || epoch == kEpochs) {
        statuses[id] = epoch == kEpochs ? hpo::TrialStatus::kCompleted : hpo::TrialStatus::kStopped;
        scheduler->OnTrialEnd(*trial, statuses[id]);
        break;
      }
    }
    calls += step_calls;
    if (last_tenth) {
      calls_last_tenth += step_calls;
      seconds_last_tenth += hpo::bench::NowSeconds() - step_began;
    }
  }
  SweepCost cost;
  cost.seconds_per_call = (hpo::bench::NowSeconds() - began) / static_cast<double>(calls);
  cost.seconds_per_call_last_tenth = seconds_last_tenth / static_cast<double>(calls_last_tenth);
  std::unique_ptr<hpo::Scheduler> replayed = MakeAsha(promotion);
  const double replay_began = hpo::bench::NowSeconds();
  for (size_t id = 0; id < reports.size(); ++id) {
    replayed->ReplayTrial(static_cast<int64_t>(id), reports[id], statuses[id]);
  }
  cost.replay_seconds = hpo::bench::NowSeconds() - replay_began;
  cost.check = static_cast<int64_t>(reports.size()) == trials &&
               replayed->SaveState() == scheduler->SaveState();
  return cost;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes = {1000, 10000, 100000};
  if (argc > 1) sizes.clear();
  for (int i = 1; i < argc; ++i) sizes.push_back(std::stoll(argv[i]));
  for (const bool promotion : {false, true}) {
    for (const int64_t trials : sizes) {
      const SweepCost cost = RunSweep(promotion, trials);
      hpo::bench::PrintResult(
          "asha_scale",
          {{"variant", promotion ? "promotion" : "stopping"},
           {"trials", std::to_string(trials)},
           {"us_per_call", hpo::bench::Number(cost.seconds_per_call * 1e6)},
           {"us_per_call_last_10pct", hpo::bench::Number(cost.seconds_per_call_last_tenth * 1e6)},
           {"replay_s", hpo::bench::Number(cost.replay_seconds)}},
          cost.check);
    }
  }
  return 0;
}
