#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "common/bytes.hpp"
#include "common/seeding.hpp"
#include "gaussian.hpp"
#include "model_space.hpp"
#include "search/sampling.hpp"
#include "searchers.hpp"

namespace hpo {

namespace {

constexpr uint64_t kSobolScramblePurpose = 0x736f626f6cULL;  // "sobol"
constexpr char kStateTag[] = "hpo-sobol-state/v1";

// Whether the parameter takes a dimension of the sequence (see SobolSearcher).
bool UsesSequence(const ParameterSpec& spec) {
  return spec.distribution != Distribution::kConstant && spec.distribution != Distribution::kBeta &&
         spec.distribution != Distribution::kQBeta;
}

double Lerp(double low, double high, double u) { return low + u * (high - low); }

size_t IndexOf(double u, size_t count) {
  return std::min(static_cast<size_t>(u * static_cast<double>(count)), count - 1);
}

double NormalQuantile(const ParameterSpec& spec, double u) {
  return spec.sigma == 0.0 ? spec.mu : spec.mu + spec.sigma * InverseNormalCdf(u);
}

// The value of `spec`'s distribution at quantile u in (0, 1). Precondition: UsesSequence(spec).
ParamValue Quantile(const ParameterSpec& spec, double u) {
  const double min = spec.min;
  const double max = spec.max;
  switch (spec.distribution) {
    case Distribution::kCategorical:
      return spec.values[IndexOf(u, spec.values.size())];
    case Distribution::kCategoricalWithProbabilities: {
      double total = 0.0;
      for (double probability : spec.probabilities) total += probability;
      double cumulative = 0.0;
      for (size_t i = 0; i + 1 < spec.values.size(); ++i) {
        cumulative += spec.probabilities[i] / total;
        if (u < cumulative) return spec.values[i];
      }
      return spec.values.back();
    }
    case Distribution::kIntUniform: {
      const int64_t first = std::llround(min);
      const auto count = static_cast<size_t>(std::llround(max) - first + 1);
      return first + static_cast<int64_t>(IndexOf(u, count));
    }
    case Distribution::kUniform:
      return std::clamp(Lerp(min, max, u), min, max);
    case Distribution::kQUniform:
      return RoundToMultipleWithin(Lerp(min, max, u), spec.q, min, max);
    case Distribution::kLogUniform:
      return std::clamp(std::exp(Lerp(min, max, u)), std::exp(min), std::exp(max));
    case Distribution::kLogUniformValues:
      return std::clamp(std::exp(Lerp(std::log(min), std::log(max), u)), min, max);
    case Distribution::kQLogUniform:
      return RoundToMultipleWithin(std::exp(Lerp(min, max, u)), spec.q, std::exp(min),
                                   std::exp(max));
    case Distribution::kQLogUniformValues:
      return RoundToMultipleWithin(std::exp(Lerp(std::log(min), std::log(max), u)), spec.q, min,
                                   max);
    case Distribution::kInvLogUniform:
      return std::clamp(std::exp(-Lerp(min, max, u)), std::exp(-max), std::exp(-min));
    case Distribution::kInvLogUniformValues:
      return std::clamp(std::exp(-Lerp(-std::log(max), -std::log(min), u)), min, max);
    case Distribution::kNormal:
      return NormalQuantile(spec, u);
    case Distribution::kQNormal:
      return std::round(NormalQuantile(spec, u) / spec.q) * spec.q;
    case Distribution::kLogNormal:
      return PositiveFinite(std::exp(NormalQuantile(spec, u)));
    case Distribution::kQLogNormal:
      return std::round(PositiveFinite(std::exp(NormalQuantile(spec, u))) / spec.q) * spec.q;
    default:
      return spec.values.front();
  }
}

int SequenceDimensions(const std::vector<ParameterSpec>& parameters) {
  return static_cast<int>(std::count_if(parameters.begin(), parameters.end(), UsesSequence));
}

std::string Fingerprint(const std::vector<ParameterSpec>& parameters) {
  std::string fingerprint = "random/sobol";
  for (const ParameterSpec& parameter : parameters) {
    fingerprint += " " + parameter.name + ":" + DistributionName(parameter.distribution);
  }
  return fingerprint;
}

}  // namespace

Status SobolSearcher::Create(const SweepConfig& config, std::unique_ptr<Searcher>* searcher) {
  const int dimensions = SequenceDimensions(config.sweep.parameters);
  if (dimensions > ScrambledSobolSequence::kMaxDimensions) {
    return Status::BadInput("search.sampler: sobol supports at most " +
                            std::to_string(ScrambledSobolSequence::kMaxDimensions) +
                            " swept parameters (not counting constants and beta), this sweep "
                            "has " +
                            std::to_string(dimensions) + "; use sampler: independent");
  }
  searcher->reset(new SobolSearcher(config.sweep.parameters, config.execution.seed, dimensions));
  return Status::Ok();
}

SobolSearcher::SobolSearcher(std::vector<ParameterSpec> parameters, uint64_t seed, int dimensions)
    : parameters_(std::move(parameters)),
      seed_(seed),
      sequence_(dimensions, true, DeriveSeed(seed, kSobolScramblePurpose, 0)) {}

std::optional<Assignment> SobolSearcher::Suggest(int64_t trial_id) {
  if (trial_id < 0) return std::nullopt;
  const std::vector<double> point = sequence_.Point(static_cast<uint64_t>(trial_id));
  std::mt19937_64 rng(DeriveSeed(seed_, kSamplingPurpose, static_cast<uint64_t>(trial_id)));
  Assignment assignment;
  size_t dimension = 0;
  for (const ParameterSpec& parameter : parameters_) {
    ParamValue value = UsesSequence(parameter) ? Quantile(parameter, point[dimension++])
                                               : SampleParameter(parameter, rng);
    assignment.push_back(NamedValue{parameter.name, std::move(value)});
  }
  return assignment;
}

void SobolSearcher::Observe(int64_t, const Assignment&, TrialStatus, double) {}

std::string SobolSearcher::SaveState() const {
  std::vector<uint8_t> bytes;
  ByteWriter writer(&bytes);
  writer.PutString(kStateTag);
  writer.PutString(Fingerprint(parameters_));
  writer.Put<uint64_t>(seed_);
  return std::string(bytes.begin(), bytes.end());
}

Status SobolSearcher::RestoreState(const std::string& state) {
  if (state != SaveState()) {
    return Status::BadInput(
        "saved searcher state is not this Sobol search's (another sampler, config or seed)");
  }
  return Status::Ok();
}

}  // namespace hpo
