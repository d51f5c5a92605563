// Population-based training (Jaderberg et al. 2017; Ray Tune's PopulationBasedTraining), the
// decisions alone: which members wait at an epoch boundary, and once a generation has gathered
// there, which are replaced by copies of which, with what hyperparameters. Lives on rank 0 inside
// the coordinator (which pauses, stops and dispatches the trials and copies the checkpoints);
// knows nothing of MPI, torch or files. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/param.hpp"

namespace hpo {

// One exploit/explore: member `replaced` ends (stopped, with `reason`), and a new trial (id
// `child`) starts from `parent`'s checkpoint at the generation's epoch with `params`: the
// parent's hyperparameters with the mutations perturbed or resampled.
struct PbtExploit {
  int64_t replaced = -1;
  int64_t child = -1;
  int64_t parent = -1;
  Assignment params;
  double replaced_objective = 0.0;  // the replaced member's value at the boundary
  std::string reason;
};

// A generation's decision at boundary `epoch`: `continuing` members go on from their own
// checkpoints (ascending ids), `exploits` replace the others (in ascending child id).
struct PbtGeneration {
  int64_t epoch = 0;
  std::vector<int64_t> continuing;
  std::vector<PbtExploit> exploits;
};

// The population. Boundaries are the multiples of perturbation_interval below `epochs`; a member
// that reports a boundary waits there. When the population is complete (its `initial_members`
// first members have joined; see Decide) and every live member waits at the same boundary b, the
// N members are ranked by their value at b (better first by `goal`, NaN last, ties by lower id)
// and n = min(ceil(N * quantile), floor(N / 2)) replaced: the i-th worst (i = 0..n-1, worst first)
// by a copy of a top-n member drawn uniformly, whose hyperparameters are explored: each mutation
// the parent has is resampled from its distribution with probability resample_probability (always
// for categoricals), else multiplied by 0.8 or 1.2 (equally likely), rounded for integers and q
// distributions and clamped into the distribution's range. Every draw comes from a generator
// seeded by (seed, b, replaced id), so a decision depends only on the values at b: a resumed sweep
// that replays the same reports decides the same.
class PbtPopulation {
 public:
  // `parameters`: the sweep's (the mutations' distributions); `initial_members` >= 1: how many
  // trials the searcher suggests (min(population, run_cap, the space's size)).
  PbtPopulation(const PbtSpec& spec, std::vector<ParameterSpec> parameters, Goal goal,
                std::string metric, int64_t epochs, uint64_t seed, int64_t initial_members);

  bool IsBoundary(int64_t epoch) const;
  // A trial joins: an initial member (start_epoch 0) or a child (its parent's epoch). Joining
  // again is ignored.
  void Join(int64_t trial_id, const Assignment& params, int64_t start_epoch);
  // Whether the trial ever joined.
  bool Known(int64_t trial_id) const { return members_.count(trial_id) != 0; }
  // Member `trial_id` reported `epoch`; true when it must wait there (a boundary not decided for
  // it yet: a program that reports a decided epoch again goes on). A report after the boundary it
  // waited at means it went on. Unknown trials are ignored (false).
  bool OnEpoch(int64_t trial_id, int64_t epoch, double objective);
  // The member ended (completed, failed, stopped): it no longer counts.
  void Leave(int64_t trial_id);
  // Resume: the member runs again; when it waits at a boundary whose generation was decided (a
  // child started from it), it no longer waits. Returns whether it still waits.
  bool Resumed(int64_t trial_id);
  // The boundary the member waits at; nullopt when it does not wait (or is unknown).
  std::optional<int64_t> WaitingAt(int64_t trial_id) const;

  // The generation's decision when every live member waits at the same boundary and the
  // population is complete (or `force`: nothing else can join); the children get ids
  // first_child_id, first_child_id + 1, ... and join, the replaced members leave, the continuing
  // ones wait no more. nullopt otherwise.
  std::optional<PbtGeneration> Decide(int64_t first_child_id, bool force = false);

  // How many trials the sweep runs when no member fails: the initial members and n per boundary.
  int64_t PlannedTrials() const;
  int64_t initial_members() const { return initial_members_; }

  // Explore: `params` with the mutations perturbed or resampled by `rng` (see above). Exposed for
  // tests.
  Assignment Explore(const Assignment& params, std::mt19937_64& rng) const;

 private:
  struct Member {
    Assignment params;
    int64_t start_epoch = 0;
    bool live = true;
    std::optional<int64_t> waiting_at;
    int64_t passed = 0;  // the last boundary decided for it (a child: its start)
    double value = 0.0;  // at waiting_at
  };
  bool Better(double a, double b) const;

  PbtSpec spec_;
  std::vector<ParameterSpec> parameters_;
  Goal goal_;
  std::string metric_;
  int64_t epochs_;
  uint64_t seed_;
  int64_t initial_members_;
  int64_t initial_joined_ = 0;
  std::map<int64_t, Member> members_;
  std::map<int64_t, int64_t> children_at_;  // boundary -> children started there
};

}  // namespace hpo
