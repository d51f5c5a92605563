#include "sched/curve_scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

#include "common/bytes.hpp"
#include "common/infinity.hpp"
#include "search/gaussian_process.hpp"

namespace hpo::sched_internal {

namespace {

constexpr char kCurveStateTag[] = "hpo.scheduler.curves.v1";

}  // namespace

CurveScheduler::CurveScheduler(std::vector<int64_t> rungs, int64_t epochs, Goal goal,
                               std::string metric, int64_t startup_trials,
                               std::optional<int64_t> run_cap)
    : rungs_(std::move(rungs)),
      epochs_(epochs),
      goal_(goal),
      metric_(std::move(metric)),
      startup_trials_(startup_trials),
      run_cap_(run_cap) {}

void CurveScheduler::Record(int64_t epoch, double objective, TrialCurve* trial) const {
  // Past the last epoch a report changes no prediction (they read the last epoch's loss); a
  // program that numbers its reports by batch must not grow the curve to millions of entries.
  if (epoch > epochs_) return;
  if (static_cast<int64_t>(trial->losses.size()) < epoch) {
    trial->losses.resize(static_cast<size_t>(epoch), kInfinity);
  }
  trial->losses[static_cast<size_t>(epoch - 1)] = LossOf(goal_, objective);
}

void CurveScheduler::Update(TrialCurve* trial) const {
  trial->curve = CurveThroughGaps(trial->losses);
  trial->extrapolation = CurvePredictor::Extrapolate(trial->curve, epochs_);
}

const CurveScheduler::Option* CurveScheduler::Valuation::Find(int64_t trial_id) const {
  const auto found =
      std::lower_bound(options.begin(), options.end(), trial_id,
                       [](const Option& option, int64_t id) { return option.trial_id < id; });
  return found != options.end() && found->trial_id == trial_id ? &*found : nullptr;
}

CurveScheduler::Valuation CurveScheduler::Value() const {
  Valuation valuation;
  CurvePredictor predictor(epochs_);
  for (const auto& [id, trial] : trials_) predictor.AddReference(trial.curve);
  valuation.report_variance = predictor.ReportVariance();
  valuation.incumbent = kInfinity;
  valuation.options.reserve(trials_.size());
  for (const auto& [id, trial] : trials_) {
    if (trial.curve.losses.empty()) continue;
    Option option;
    option.trial_id = id;
    option.paused = trial.paused;
    option.trained = static_cast<int64_t>(trial.curve.losses.size());
    option.prediction = predictor.Predict(trial.curve.losses, trial.extrapolation);
    valuation.incumbent = std::min(valuation.incumbent, option.prediction.mean);
    valuation.options.push_back(option);
  }
  // log EI per trial, then the log of their mean by log-sum-exp (trials without a finite report
  // count as worth nothing).
  double top = -kInfinity;
  std::vector<double> log_improvement;
  log_improvement.reserve(valuation.options.size());
  for (Option& option : valuation.options) {
    const double value = LogExpectedImprovement(option.prediction.mean, option.prediction.variance,
                                                valuation.incumbent);
    log_improvement.push_back(value);
    top = std::max(top, value);
    const int64_t cost = option.paused && resumes_start_over_ ? epochs_ : epochs_ - option.trained;
    option.continue_value = value - std::log(static_cast<double>(std::max<int64_t>(1, cost)));
  }
  const auto reported = static_cast<int64_t>(trials_.size());
  if (no_new_trials_ || (run_cap_ && reported >= *run_cap_)) {
    valuation.new_trial_value = -kInfinity;
  } else if (reported < std::max<int64_t>(2, startup_trials_) || !std::isfinite(top)) {
    valuation.new_trial_value = kInfinity;
  } else {
    double sum = 0.0;
    for (double value : log_improvement) sum += std::exp(value - top);
    valuation.new_trial_value = top +
                                std::log(kNewTrialShare * sum / static_cast<double>(reported)) -
                                std::log(static_cast<double>(epochs_));
  }
  const bool any_complete = std::any_of(trials_.begin(), trials_.end(), [&](const auto& entry) {
    return static_cast<int64_t>(entry.second.curve.losses.size()) >= epochs_;
  });
  valuation.only_contenders = valuation.new_trial_value == -kInfinity && any_complete;
  return valuation;
}

bool CurveScheduler::MayEndBest(const Option& option, const Valuation& valuation) {
  const FinalPrediction report{option.prediction.mean,
                               option.prediction.variance + valuation.report_variance};
  return ProbabilityOfImprovement(report, valuation.incumbent) >= kGoOnProbability;
}

bool CurveScheduler::MayGoOn(const Option& option, const Valuation& valuation) const {
  if (!option.paused) return false;
  if (std::isfinite(valuation.new_trial_value)) return MayEndBest(option, valuation);
  return !valuation.only_contenders || option.trained < rungs_.back() ||
         MayEndBest(option, valuation);
}

std::string CurveScheduler::Describe(const FinalPrediction& prediction) const {
  const double mean = goal_ == Goal::kMaximize ? -prediction.mean : prediction.mean;
  char text[96];
  std::snprintf(text, sizeof(text), "%.4g +- %.2g", mean, std::sqrt(prediction.variance));
  return text;
}

SchedulerDecision CurveScheduler::OnEpoch(int64_t trial_id, int64_t epoch, double objective) {
  TrialCurve& trial = trials_[trial_id];
  trial.paused = false;
  if (epoch < 1) return {};
  Record(epoch, objective, &trial);
  Update(&trial);
  if (epoch >= epochs_ || epoch < rungs_.front()) return {};
  SchedulerDecision decision;
  if (!std::isfinite(trial.losses[static_cast<size_t>(epoch - 1)])) {
    decision.keep_going = false;
    decision.reason = "stopped at epoch " + std::to_string(epoch) + ": " + metric_ +
                      " is not a number, so its curve cannot be predicted";
    return decision;
  }
  const Valuation valuation = Value();
  const Option& own = *valuation.Find(trial_id);  // it has an option: this report is finite
  double best_other = valuation.new_trial_value;
  std::string rival = "a new trial";
  for (const Option& other : valuation.options) {
    if (other.trial_id != trial_id && other.continue_value > best_other &&
        MayGoOn(other, valuation)) {
      best_other = other.continue_value;
      rival = "paused trial " + std::to_string(other.trial_id);
    }
  }
  // While new trials can start, a trial at or past the last rung that may not end best gives way.
  const bool gives_way = std::isfinite(valuation.new_trial_value) && epoch >= rungs_.back() &&
                         !MayEndBest(own, valuation);
  if (own.continue_value >= best_other && !gives_way) return decision;
  decision.keep_going = false;
  decision.pause = true;
  trial.paused = true;
  const std::string why =
      gives_way ? "under a " + GoOnPercent() + " % chance to end best, it gives way to new trials"
                : rival + " is expected to gain more per epoch";
  decision.reason = "paused at epoch " + std::to_string(epoch) + ": predicted final " + metric_ +
                    " " + Describe(own.prediction) + "; " + why;
  return decision;
}

void CurveScheduler::OnTrialEnd(int64_t trial_id, TrialStatus /*status*/) {
  trials_[trial_id].paused = false;
}

std::optional<int64_t> CurveScheduler::Promote(bool idle) {
  if (idle) no_new_trials_ = true;
  if (paused_trials() == 0) return std::nullopt;
  const Valuation valuation = Value();
  const bool late = valuation.new_trial_value == -kInfinity;  // Promote(true) set no_new_trials_
  std::optional<int64_t> best;
  double best_value = -kInfinity;
  for (const Option& option : valuation.options) {
    if ((best && option.continue_value <= best_value) || !MayGoOn(option, valuation)) continue;
    best = option.trial_id;
    best_value = option.continue_value;
  }
  // A paused trial without a finite report has no option: it is worth nothing, and goes on only
  // when no other may and nothing else can run.
  if (!best && late && !valuation.only_contenders) {
    for (const auto& [id, trial] : trials_) {
      if (trial.paused) {
        best = id;
        break;
      }
    }
  }
  if (!best || (!late && best_value < valuation.new_trial_value)) return std::nullopt;
  trials_[*best].paused = false;
  return best;
}

size_t CurveScheduler::paused_trials() const {
  return static_cast<size_t>(std::count_if(trials_.begin(), trials_.end(),
                                           [](const auto& entry) { return entry.second.paused; }));
}

std::string CurveScheduler::GoOnPercent() {
  return std::to_string(static_cast<int>(std::lround(kGoOnProbability * 100)));
}

std::string CurveScheduler::WhyLeftPaused() const {
  return "past the last rung, each under a " + GoOnPercent() + " % chance to end best";
}

void CurveScheduler::ReplayTrial(int64_t trial_id, const std::map<int64_t, double>& reports,
                                 TrialStatus status) {
  TrialCurve& trial = trials_[trial_id];
  trial.losses.clear();
  for (const auto& [epoch, objective] : reports) {
    if (epoch >= 1) Record(epoch, objective, &trial);
  }
  Update(&trial);
  trial.paused = status == TrialStatus::kPaused;
}

std::optional<FinalPrediction> CurveScheduler::PredictFinal(int64_t trial_id) const {
  const Valuation valuation = Value();
  const Option* found = valuation.Find(trial_id);
  if (found == nullptr) return std::nullopt;
  return found->prediction;
}

std::string CurveScheduler::Fingerprint() const {
  std::vector<uint8_t> bytes;
  ByteWriter writer(&bytes);
  writer.Put<uint8_t>(goal_ == Goal::kMaximize ? 1 : 0);
  writer.Put<int64_t>(epochs_);
  writer.Put<int64_t>(startup_trials_);
  writer.Put<uint64_t>(rungs_.size());
  for (int64_t epoch : rungs_) writer.Put(epoch);
  return std::string(bytes.begin(), bytes.end());
}

std::string CurveScheduler::ConfigFingerprint() const {
  return std::string(kCurveStateTag) + " " + Fingerprint();
}

std::string CurveScheduler::SaveState() const {
  std::vector<uint8_t> bytes;
  ByteWriter writer(&bytes);
  writer.PutString(kCurveStateTag);
  writer.PutString(Fingerprint());
  writer.Put<uint64_t>(trials_.size());
  for (const auto& [id, trial] : trials_) {
    writer.Put<int64_t>(id);
    writer.Put<uint8_t>(trial.paused ? 1 : 0);
    writer.PutDoubles(trial.losses);
  }
  return std::string(bytes.begin(), bytes.end());
}

Status CurveScheduler::RestoreState(const std::string& state) {
  const std::vector<uint8_t> bytes(state.begin(), state.end());
  ByteReader reader(bytes);
  if (reader.GetString() != kCurveStateTag || !reader.ok()) {
    return Status::BadInput(std::string("saved scheduler state does not start with '") +
                            kCurveStateTag + "'");
  }
  if (reader.GetString() != Fingerprint() || !reader.ok()) {
    return Status::BadInput(
        "saved scheduler state is from another config: its curve model settings (rungs, "
        "epochs, startup_trials, goal) differ from this sweep's");
  }
  std::map<int64_t, TrialCurve> trials;
  const uint64_t count = reader.Get<uint64_t>();
  for (uint64_t i = 0; i < count && reader.ok(); ++i) {
    const int64_t id = reader.Get<int64_t>();
    const uint8_t flags = reader.Get<uint8_t>();
    TrialCurve trial;
    trial.paused = flags == 1;
    trial.losses = reader.GetDoubles();
    Update(&trial);
    if (!trials.emplace(id, std::move(trial)).second || flags > 1) {
      return Status::BadInput("saved scheduler state is truncated or corrupt");
    }
  }
  if (!reader.ok() || !reader.at_end()) {
    return Status::BadInput("saved scheduler state is truncated or corrupt");
  }
  trials_ = std::move(trials);
  return Status::Ok();
}

}  // namespace hpo::sched_internal
