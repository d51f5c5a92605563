#include "space_filling.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <utility>

#include "common/seeding.hpp"
#include "gaussian.hpp"
#include "model_space.hpp"
#include "search/sampling.hpp"

namespace hpo {

namespace {

constexpr uint64_t kStartupSobolPurpose = 0x7374617274ULL;  // "start"
constexpr uint64_t kBalancedPurpose = 0x62616c616e6365ULL;  // "balance", plus the parameter index

double Lerp(double low, double high, double u) { return low + u * (high - low); }

size_t IndexOf(double u, size_t count) {
  return std::min(static_cast<size_t>(u * static_cast<double>(count)), count - 1);
}

double NormalQuantile(const ParameterSpec& spec, double u) {
  return spec.sigma == 0.0 ? spec.mu : spec.mu + spec.sigma * InverseNormalCdf(u);
}

}  // namespace

ParamValue ParameterQuantile(const ParameterSpec& spec, double u) {
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

bool HasQuantile(const ParameterSpec& spec) {
  return spec.distribution != Distribution::kConstant && spec.distribution != Distribution::kBeta &&
         spec.distribution != Distribution::kQBeta;
}

namespace {

int CountSequenceDimensions(const std::vector<ParameterSpec>& parameters, RandomSampler sampler) {
  if (sampler != RandomSampler::kSobol) return 0;
  int dimensions = 0;
  for (const ParameterSpec& parameter : parameters) {
    if (parameter.distribution != Distribution::kCategorical && HasQuantile(parameter)) {
      ++dimensions;
    }
  }
  return std::min(dimensions, ScrambledSobolSequence::kMaxDimensions);
}

}  // namespace

StartupDesign::StartupDesign(std::vector<ParameterSpec> parameters, uint64_t seed,
                             RandomSampler sampler)
    : parameters_(std::move(parameters)),
      seed_(seed),
      sequence_(CountSequenceDimensions(parameters_, sampler), true,
                DeriveSeed(seed, kStartupSobolPurpose, 0)) {
  int sequence_dimensions = 0;
  for (const ParameterSpec& parameter : parameters_) {
    if (sampler != RandomSampler::kSobol) {
      sources_.push_back(Source::kRandom);
    } else if (parameter.distribution == Distribution::kCategorical) {
      sources_.push_back(Source::kBalanced);
    } else if (HasQuantile(parameter) && sequence_dimensions < sequence_.dimensions()) {
      sources_.push_back(Source::kSequence);
      ++sequence_dimensions;
    } else {
      sources_.push_back(Source::kRandom);
    }
  }
}

Assignment StartupDesign::TrialAt(int64_t trial_id) const {
  const auto k = static_cast<uint64_t>(trial_id);
  const std::vector<double> point = sequence_.Point(k);
  std::mt19937_64 rng(DeriveSeed(seed_, kSamplingPurpose, k));
  Assignment assignment;
  size_t dimension = 0;
  for (size_t p = 0; p < parameters_.size(); ++p) {
    const ParameterSpec& parameter = parameters_[p];
    ParamValue value;
    switch (sources_[p]) {
      case Source::kBalanced: {
        const uint64_t count = parameter.values.size();
        std::vector<size_t> order(count);
        std::iota(order.begin(), order.end(), size_t{0});
        std::mt19937_64 shuffle(DeriveSeed(seed_, kBalancedPurpose + p, k / count));
        std::shuffle(order.begin(), order.end(), shuffle);
        value = parameter.values[order[k % count]];
        break;
      }
      case Source::kSequence:
        value = ParameterQuantile(parameter, point[dimension++]);
        break;
      case Source::kRandom:
        value = SampleParameter(parameter, rng);
        break;
    }
    assignment.push_back(NamedValue{parameter.name, std::move(value)});
  }
  return assignment;
}

}  // namespace hpo
