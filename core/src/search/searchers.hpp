// Private to hpo_core: the searchers MakeSearcher builds. Not thread-safe (see searcher.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/searcher.hpp"

namespace hpo {

// Enumerates the cartesian product of the parameters' values in config order, the first
// parameter varying slowest and the last fastest: trial k is point k of that order, whatever
// order the ids arrive in. Constants contribute one value, categoricals their `values`,
// int_uniform ranges every integer from min to max. SpaceSize is the product (saturating at
// INT64_MAX); Suggest returns nullopt for ids at or past it. The sweep's run_cap is not applied
// here: the coordinator stops at min(run_cap, SpaceSize).
class GridSearcher final : public Searcher {
 public:
  // BadInput "FILE:LINE: sweep.parameters.NAME: ..." when a parameter is not enumerable (e.g. a
  // uniform range; the config parser already rejects those).
  static Status Create(const SweepConfig& config, std::unique_ptr<Searcher>* searcher);

  std::optional<Assignment> Suggest(int64_t trial_id) override;
  void Observe(int64_t trial_id, const Assignment& params, TrialStatus status,
               double objective) override;
  std::optional<int64_t> SpaceSize() const override { return space_size_; }
  // Trial k is point k: the state is only a tag and the space size, checked on restore.
  std::string SaveState() const override;
  Status RestoreState(const std::string& state) override;

 private:
  explicit GridSearcher(std::vector<ParameterSpec> parameters);

  std::vector<ParameterSpec> parameters_;
  std::vector<int64_t> value_counts_;  // per parameter
  int64_t space_size_ = 1;
};

// Draws every parameter independently from its distribution. Trial k's values come from a
// generator seeded with DeriveSeed(seed, kSamplingPurpose, k) (seeding.hpp, SplitMix64), drawing
// the parameters in config order, so
// trial k is the same whatever order Suggest is called in and however often. Unbounded:
// SpaceSize is nullopt and the coordinator applies run_cap.
class RandomSearcher final : public Searcher {
 public:
  RandomSearcher(std::vector<ParameterSpec> parameters, uint64_t seed);

  std::optional<Assignment> Suggest(int64_t trial_id) override;
  void Observe(int64_t trial_id, const Assignment& params, TrialStatus status,
               double objective) override;
  std::optional<int64_t> SpaceSize() const override { return std::nullopt; }
  // Trial k depends only on (seed, k): the state is only a tag and the seed, checked on restore.
  std::string SaveState() const override;
  Status RestoreState(const std::string& state) override;

 private:
  std::vector<ParameterSpec> parameters_;
  uint64_t seed_;
};

}  // namespace hpo
