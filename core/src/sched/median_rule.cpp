// MedianRule: the median stopping rule (see stopping_rules.hpp).
#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "common/count_text.hpp"
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
  history->erase(history->lower_bound(epoch), history->end());
  Point point{objective, 0.0, 0};
  if (!history->empty()) {
    point.finite_sum = history->rbegin()->second.finite_sum;
    point.finite_count = history->rbegin()->second.finite_count;
  }
  if (std::isfinite(objective)) {
    point.finite_sum += objective;
    ++point.finite_count;
  }
  history->emplace(epoch, point);
}

std::optional<double> MedianRule::RunningAverage(const History& history, int64_t epoch) {
  if (history.empty() || history.rbegin()->first < epoch) return std::nullopt;
  const Point& point = std::prev(history.upper_bound(epoch))->second;
  if (point.finite_count == 0) return std::nullopt;
  return point.finite_sum / static_cast<double>(point.finite_count);
}

double MedianRule::BestSoFar(const History& history) const {
  double best = kNaN;
  for (const auto& [epoch, point] : history) {
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

  std::vector<double> averages;
  for (const auto& [other_id, other] : histories_) {
    if (other_id == trial_id) continue;
    if (const std::optional<double> average = RunningAverage(other, epoch)) {
      averages.push_back(*average);
    }
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
      FormatParamValue(ParamValue(median)) + " of " + CountOf(averages.size(), "trial");
  return decision;
}

void MedianRule::Save(ByteWriter* writer) const {
  writer->Put<uint64_t>(histories_.size());
  for (const auto& [trial_id, history] : histories_) {
    writer->Put(trial_id);
    std::vector<double> objectives;  // per epoch from 1, NaN where none was reported
    for (const auto& [epoch, point] : history) {
      objectives.resize(static_cast<size_t>(epoch - 1), kNaN);
      objectives.push_back(point.objective);
    }
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
      if (!std::isnan(objectives[epoch - 1]) || epoch == objectives.size()) {
        Record(&entry->second, static_cast<int64_t>(epoch), objectives[epoch - 1]);
      }
    }
  }
  return reader->ok();
}

}  // namespace hpo::sched_internal
