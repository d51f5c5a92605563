// Early-stopping decisions as a sweep grows: ASHA (stopping and promotion variants) over N
// trials, each N in 1,000 / 10,000 / 100,000 (or the sizes given), and the curve scheduler of
// search.model curves (which pauses and promotes like the promotion variant) up to 1,000 trials
// (--curves-max N raises that: each of its decisions values every trial, so a sweep costs O(N^2)):
//   hpo_bench_asha_scale [--curves-max N] [N ...]
// One sequential sweep per variant and size (rungs 1, 3, 9 of 27 epochs, eta 3): a free slot
// takes a promotable paused trial first (promotion variant), else a new trial, which reports an
// objective per epoch (its quality, drawn once, times a rising curve, plus noise) until it is
// stopped, paused or done. Prints the time per scheduler call (OnEpoch or Promote) over the
// whole sweep and over its last 10 % of trials, the p50 and p99 of the decisions (Promote, and
// OnEpoch at the rungs 1, 3 and 9, where the schedulers compare trials), and the time to rebuild
// the state on resume (ReplayTrial of every trial's reports). Check: the sweep trained every trial
// it started and the replayed scheduler's state equals the live one's.
#include <algorithm>
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

enum class Variant { kStopping, kPromotion, kCurves };

const char* VariantName(Variant variant) {
  switch (variant) {
    case Variant::kStopping:
      return "stopping";
    case Variant::kPromotion:
      return "promotion";
    case Variant::kCurves:
      return "curves";
  }
  return "?";
}

std::unique_ptr<hpo::Scheduler> MakeScheduler(Variant variant, int64_t trials) {
  hpo::SweepConfig config;
  config.sweep.metric.name = "val_accuracy";
  config.sweep.metric.goal = hpo::Goal::kMaximize;
  config.execution.epochs = kEpochs;
  config.sweep.early_terminate.enabled = true;
  config.sweep.early_terminate.min_iter = 1;
  config.sweep.early_terminate.eta = 3;
  config.sweep.early_terminate.promotion = variant == Variant::kPromotion;
  if (variant == Variant::kCurves) {
    config.sweep.method = hpo::SearchMethod::kBayes;
    config.search.model = hpo::BayesModel::kCurves;
    config.sweep.run_cap = trials;
  }
  std::unique_ptr<hpo::Scheduler> scheduler;
  if (!hpo::MakeScheduler(config, &scheduler).ok()) std::exit(2);
  return scheduler;
}

struct SweepCost {
  double seconds_per_call = 0.0;
  double seconds_per_call_last_tenth = 0.0;
  hpo::bench::Summary decision_micros;
  double replay_seconds = 0.0;
  bool check = true;
};

SweepCost RunSweep(Variant variant, int64_t trials) {
  std::unique_ptr<hpo::Scheduler> scheduler = MakeScheduler(variant, trials);
  const bool promotion = variant != Variant::kStopping;
  std::vector<double> decisions;  // microseconds per decision call
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
      const double call_began = hpo::bench::NowSeconds();
      trial = scheduler->Promote(/*idle=*/next_trial >= trials);
      decisions.push_back((hpo::bench::NowSeconds() - call_began) * 1e6);
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
      const double call_began = hpo::bench::NowSeconds();
      const hpo::SchedulerDecision decision = scheduler->OnEpoch(*trial, epoch, value);
      if (epoch == 1 || epoch == 3 || epoch == 9) {
        decisions.push_back((hpo::bench::NowSeconds() - call_began) * 1e6);
      }
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
  cost.decision_micros = hpo::bench::Summarize(decisions);
  std::unique_ptr<hpo::Scheduler> replayed = MakeScheduler(variant, trials);
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
  std::vector<int64_t> sizes;
  int64_t curves_max = 1000;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--curves-max" && i + 1 < argc) {
      curves_max = std::stoll(argv[++i]);
    } else {
      sizes.push_back(std::stoll(argv[i]));
    }
  }
  if (sizes.empty()) sizes = {1000, 10000, 100000};
  for (const Variant variant : {Variant::kStopping, Variant::kPromotion, Variant::kCurves}) {
    for (const int64_t trials : sizes) {
      if (variant == Variant::kCurves && trials > curves_max) continue;
      const SweepCost cost = RunSweep(variant, trials);
      hpo::bench::PrintResult(
          "asha_scale",
          {{"variant", VariantName(variant)},
           {"trials", std::to_string(trials)},
           {"us_per_call", hpo::bench::Number(cost.seconds_per_call * 1e6)},
           {"us_per_call_last_10pct", hpo::bench::Number(cost.seconds_per_call_last_tenth * 1e6)},
           {"us_per_decision_p50", hpo::bench::Number(cost.decision_micros.p50)},
           {"us_per_decision_p99", hpo::bench::Number(cost.decision_micros.p99)},
           {"replay_s", hpo::bench::Number(cost.replay_seconds)}},
          cost.check);
    }
  }
  return 0;
}
