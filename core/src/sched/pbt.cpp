// PbtPopulation: population-based training's decisions (see pbt.hpp).
#include "sched/pbt.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "common/seeding.hpp"
#include "search/sampling.hpp"

namespace hpo {

namespace {

constexpr uint64_t kPbtPurpose = 0x706274ULL;  // "pbt"

bool IsCategoricalSpec(const ParameterSpec& spec) {
  return spec.type == ParamType::kString || spec.distribution == Distribution::kCategorical ||
         spec.distribution == Distribution::kCategoricalWithProbabilities;
}

// A perturbed number, rounded and clamped the way `spec` draws its values.
ParamValue PerturbedNumber(const ParameterSpec& spec, double value) {
  const ValueInterval range = SupportOf(spec);
  const bool quantized = spec.distribution == Distribution::kQUniform ||
                         spec.distribution == Distribution::kQLogUniform ||
                         spec.distribution == Distribution::kQLogUniformValues ||
                         spec.distribution == Distribution::kQNormal ||
                         spec.distribution == Distribution::kQLogNormal ||
                         spec.distribution == Distribution::kQBeta;
  if (quantized && std::isfinite(range.lower) && std::isfinite(range.upper)) {
    value = RoundToMultipleWithin(value, spec.q, range.lower, range.upper);
  } else if (quantized) {
    value = RoundToMultiple(value, spec.q);
  }
  if (spec.type == ParamType::kInt) value = std::round(value);
  value = std::clamp(value, range.lower, range.upper);
  if (spec.type == ParamType::kInt) {
    // Clamped into an open end (e.g. a log range): the nearest integer inside.
    if (range.lower_open && value <= range.lower) value = std::floor(range.lower) + 1.0;
    if (range.upper_open && value >= range.upper) value = std::ceil(range.upper) - 1.0;
    return static_cast<int64_t>(value);
  }
  return value;
}

}  // namespace

PbtPopulation::PbtPopulation(const PbtSpec& spec, std::vector<ParameterSpec> parameters, Goal goal,
                             std::string metric, int64_t epochs, uint64_t seed,
                             int64_t initial_members)
    : spec_(spec),
      parameters_(std::move(parameters)),
      goal_(goal),
      metric_(std::move(metric)),
      epochs_(epochs),
      seed_(seed),
      initial_members_(std::max<int64_t>(1, initial_members)) {}

bool PbtPopulation::IsBoundary(int64_t epoch) const {
  return epoch > 0 && epoch < epochs_ && epoch % spec_.perturbation_interval == 0;
}

void PbtPopulation::Join(int64_t trial_id, const Assignment& params, int64_t start_epoch) {
  if (members_.count(trial_id) != 0) return;
  Member member;
  member.params = params;
  member.start_epoch = start_epoch;
  member.passed = start_epoch;
  members_.emplace(trial_id, std::move(member));
  if (start_epoch == 0) {
    ++initial_joined_;
  } else {
    ++children_at_[start_epoch];
  }
}

bool PbtPopulation::OnEpoch(int64_t trial_id, int64_t epoch, double objective) {
  const auto found = members_.find(trial_id);
  if (found == members_.end() || !found->second.live) return false;
  Member& member = found->second;
  if (member.waiting_at && epoch > *member.waiting_at) {  // it went on: decided there
    member.passed = *member.waiting_at;
    member.waiting_at.reset();
  }
  // Not a boundary, or one decided for it already (a program that reports an epoch again).
  if (!IsBoundary(epoch) || epoch <= member.passed) return false;
  member.waiting_at = epoch;
  member.value = objective;
  return true;
}

void PbtPopulation::Leave(int64_t trial_id) {
  const auto found = members_.find(trial_id);
  if (found == members_.end()) return;
  found->second.live = false;
  found->second.waiting_at.reset();
}

bool PbtPopulation::Resumed(int64_t trial_id) {
  const auto found = members_.find(trial_id);
  if (found == members_.end() || !found->second.waiting_at) return false;
  Member& member = found->second;
  if (children_at_.count(*member.waiting_at) != 0) {
    member.passed = *member.waiting_at;
    member.waiting_at.reset();
  }
  return found->second.waiting_at.has_value();
}

std::optional<int64_t> PbtPopulation::WaitingAt(int64_t trial_id) const {
  const auto found = members_.find(trial_id);
  if (found == members_.end()) return std::nullopt;
  return found->second.waiting_at;
}

bool PbtPopulation::Better(double a, double b) const {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return goal_ == Goal::kMaximize ? a > b : a < b;
}

std::optional<PbtGeneration> PbtPopulation::Decide(int64_t first_child_id, bool force) {
  if (!force && initial_joined_ < initial_members_) return std::nullopt;
  std::vector<int64_t> ranked;
  std::optional<int64_t> boundary;
  for (const auto& [id, member] : members_) {
    if (!member.live) continue;
    if (!member.waiting_at) return std::nullopt;
    if (boundary && *boundary != *member.waiting_at) return std::nullopt;
    boundary = member.waiting_at;
    ranked.push_back(id);
  }
  if (!boundary) return std::nullopt;
  std::stable_sort(ranked.begin(), ranked.end(), [this](int64_t a, int64_t b) {
    return Better(members_.at(a).value, members_.at(b).value);
  });
  const auto size = static_cast<int64_t>(ranked.size());
  const int64_t replaced = std::min<int64_t>(
      static_cast<int64_t>(std::ceil(static_cast<double>(size) * spec_.quantile - 1e-9)), size / 2);
  PbtGeneration generation;
  generation.epoch = *boundary;
  for (int64_t i = 0; i < size - replaced; ++i) generation.continuing.push_back(ranked[i]);
  std::sort(generation.continuing.begin(), generation.continuing.end());
  for (int64_t i = 0; i < replaced; ++i) {
    const int64_t worst = ranked[static_cast<size_t>(size - 1 - i)];
    std::mt19937_64 rng(DeriveSeed(seed_, kPbtPurpose ^ static_cast<uint64_t>(*boundary),
                                   static_cast<uint64_t>(worst)));
    const int64_t parent =
        ranked[static_cast<size_t>(std::uniform_int_distribution<int64_t>(0, replaced - 1)(rng))];
    PbtExploit exploit;
    exploit.replaced = worst;
    exploit.child = first_child_id + i;
    exploit.parent = parent;
    exploit.params = Explore(members_.at(parent).params, rng);
    exploit.replaced_objective = members_.at(worst).value;
    exploit.reason = "stopped by population-based training at epoch " + std::to_string(*boundary) +
                     ": " + metric_ + " " + FormatParamValue(ParamValue(members_.at(worst).value)) +
                     " in the bottom " + std::to_string(replaced) + " of " + std::to_string(size) +
                     " members; replaced by trial " + std::to_string(exploit.child) +
                     ", which continues from trial " + std::to_string(parent) + "'s checkpoint";
    generation.exploits.push_back(std::move(exploit));
  }
  for (const int64_t id : generation.continuing) {
    members_.at(id).passed = *boundary;
    members_.at(id).waiting_at.reset();
  }
  for (const PbtExploit& exploit : generation.exploits) {
    Leave(exploit.replaced);
    Join(exploit.child, exploit.params, *boundary);
  }
  return generation;
}

int64_t PbtPopulation::PlannedTrials() const {
  const int64_t size = initial_members_;
  const int64_t replaced = std::min<int64_t>(
      static_cast<int64_t>(std::ceil(static_cast<double>(size) * spec_.quantile - 1e-9)), size / 2);
  const int64_t boundaries = (epochs_ - 1) / spec_.perturbation_interval;
  return size + boundaries * replaced;
}

Assignment PbtPopulation::Explore(const Assignment& params, std::mt19937_64& rng) const {
  Assignment explored = params;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (const std::string& name : spec_.mutations) {
    const auto spec = std::find_if(parameters_.begin(), parameters_.end(),
                                   [&](const ParameterSpec& p) { return p.name == name; });
    const auto entry = std::find_if(explored.begin(), explored.end(),
                                    [&](const NamedValue& v) { return v.name == name; });
    if (spec == parameters_.end() || entry == explored.end()) continue;  // absent (condition)
    const double draw = unit(rng);
    const bool up = unit(rng) < 0.5;
    if (IsCategoricalSpec(*spec) || draw < spec_.resample_probability) {
      entry->value = SampleParameter(*spec, rng);
      continue;
    }
    double value = 0.0;
    if (const auto* integer = std::get_if<int64_t>(&entry->value)) {
      value = static_cast<double>(*integer);
    } else if (const auto* number = std::get_if<double>(&entry->value)) {
      value = *number;
    } else {
      continue;
    }
    entry->value = PerturbedNumber(*spec, value * (up ? 1.2 : 0.8));
  }
  return explored;
}

}  // namespace hpo
