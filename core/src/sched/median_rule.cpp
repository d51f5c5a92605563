// MedianRule: the median stopping rule (see stopping_rules.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "stopping_rules.hpp"

namespace hpo::sched_internal {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The median of a non-empty list; the mean of the two middle values for an even count.
double Median(std::vector<double> values) {
  const size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + middle, values.end());
  const double upper = values[middle];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + middle);
  return lower + (upper - lower) / 2.0;
}

}  // namespace

MedianRule::MedianRule(int64_t min_trials, int64_t start_step, int64_t epochs, Goal goal,
                       std::string metric)
    : min_trials_(min_trials),
      start_step_(start_step),
      epochs_(epochs),
      goal_(goal),
      metric_(std::move(metric)) {}

void MedianRule::Record(History* history, int64_t epoch, double objective) {
  history->resize(std::min(history->size(), static_cast<size_t>(epoch - 1)));
  while (static_cast<int64_t>(history->size()) < epoch) {
    const double value = static_cast<int64_t>(history->size()) == epoch - 1 ? objective : kNaN;
    Point point{value, 0.0, 0};
    if (!history->empty()) {
      point.finite_sum = history->back().finite_sum;
      point.finite_count = history->back().finite_count;
    }
    if (std::isfinite(value)) {
      point.finite_sum += value;
      ++point.finite_count;
    }
    history->push_back(point);
  }
}

double MedianRule::BestSoFar(const History& history) const {
  double best = kNaN;
  for (const Point& point : history) {
    if (std::isfinite(point.objective) && IsBetter(goal_, point.objective, best)) {
      best = point.objective;
    }
  }
  return best;
}

SchedulerDecision MedianRule::OnEpoch(int64_t trial_id, int64_t epoch, double objective) {
  if (epoch < 1 || epoch > epochs_) return {};
  History& history = histories_[trial_id];
  Record(&history, epoch, objective);
  if (epoch < start_step_ || epoch >= epochs_) return {};

  const size_t index = static_cast<size_t>(epoch - 1);
  std::vector<double> averages;
  for (const auto& [other_id, other] : histories_) {
    if (other_id == trial_id || other.size() <= index || other[index].finite_count == 0) continue;
    averages.push_back(other[index].finite_sum / static_cast<double>(other[index].finite_count));
  }
  if (static_cast<int64_t>(averages.size()) < min_trials_) return {};
  const double median = Median(averages);
  const double best = BestSoFar(history);
  if (!IsBetter(goal_, median, best)) return {};
  SchedulerDecision decision;
  decision.keep_going = false;
  decision.reason =
      "stopped at epoch " + std::to_string(epoch) + " by the median rule: best " + metric_ + " " +
      FormatParamValue(ParamValue(best)) + " worse than the median running average " +
      FormatParamValue(ParamValue(median)) + " of " + std::to_string(averages.size()) + " trials";
  return decision;
}

void MedianRule::Save(ByteWriter* writer) const {
  writer->Put<uint64_t>(histories_.size());
  for (const auto& [trial_id, history] : histories_) {
    writer->Put(trial_id);
    std::vector<double> objectives;
    objectives.reserve(history.size());
    for (const Point& point : history) objectives.push_back(point.objective);
    writer->PutDoubles(objectives);
  }
}

bool MedianRule::Restore(ByteReader* reader) {
  histories_.clear();
  const uint64_t count = reader->Get<uint64_t>();
  for (uint64_t i = 0; i < count && reader->ok(); ++i) {
    const int64_t trial_id = reader->Get<int64_t>();
    const std::vector<double> objectives = reader->GetDoubles();
    if (!reader->ok()) return false;
    const auto [entry, inserted] = histories_.emplace(trial_id, History());
    if (!inserted) return false;
    for (size_t epoch = 1; epoch <= objectives.size(); ++epoch) {
      Record(&entry->second, static_cast<int64_t>(epoch), objectives[epoch - 1]);
    }
  }
  return reader->ok();
}

}  // namespace hpo::sched_internal
