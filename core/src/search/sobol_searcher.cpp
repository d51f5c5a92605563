#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "common/bytes.hpp"
#include "common/seeding.hpp"
#include "conditions.hpp"
#include "search/sampling.hpp"
#include "searchers.hpp"
#include "space_filling.hpp"

namespace hpo {

namespace {

constexpr uint64_t kSobolScramblePurpose = 0x736f626f6cULL;  // "sobol"
constexpr char kSobolStateTag[] = "hpo-sobol-state/v1";

int SequenceDimensions(const std::vector<ParameterSpec>& parameters) {
  return static_cast<int>(std::count_if(parameters.begin(), parameters.end(), HasQuantile));
}

std::string Fingerprint(const std::vector<ParameterSpec>& parameters) {
  std::string fingerprint = "random/sobol";
  for (const ParameterSpec& parameter : parameters) {
    fingerprint += " " + parameter.name + ":" + DistributionName(parameter.distribution);
  }
  return fingerprint + ConditionsFingerprint(parameters);
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
    ParamValue value = HasQuantile(parameter) ? ParameterQuantile(parameter, point[dimension++])
                                              : SampleParameter(parameter, rng);
    assignment.push_back(NamedValue{parameter.name, std::move(value)});
  }
  // Every parameter keeps its sequence dimension, active or not, so the points of the sequence
  // (and its balance over the active parameters) are those of the sweep without conditions.
  return DropInactive(parameters_, std::move(assignment));
}

void SobolSearcher::Observe(int64_t, const Assignment&, TrialStatus, double) {}

std::string SobolSearcher::SaveState() const {
  std::vector<uint8_t> bytes;
  ByteWriter writer(&bytes);
  writer.PutString(kSobolStateTag);
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
