// RungRecord (see stopping_rules.hpp): the rank order is a red-black tree with subtree sizes
// (libstdc++'s policy-based tree with order statistics), so counting the values ahead of one is
// O(log n).
#include <cmath>
#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>
#include <limits>
#include <tuple>

#include "stopping_rules.hpp"

namespace hpo::sched_internal {

bool RungRecord::Rank::operator<(const Rank& other) const {
  return std::tie(nan, loss, trial_id) < std::tie(other.nan, other.loss, other.trial_id);
}

struct RungRecord::OrderedTree {
  __gnu_pbds::tree<Rank, __gnu_pbds::null_type, std::less<Rank>, __gnu_pbds::rb_tree_tag,
                   __gnu_pbds::tree_order_statistics_node_update>
      tree;
};

RungRecord::RungRecord(Goal goal) : goal_(goal), ordered_(std::make_unique<OrderedTree>()) {}

RungRecord::RungRecord(const RungRecord& other)
    : goal_(other.goal_),
      values_(other.values_),
      ordered_(std::make_unique<OrderedTree>(*other.ordered_)) {}

RungRecord& RungRecord::operator=(const RungRecord& other) {
  if (this != &other) {
    goal_ = other.goal_;
    values_ = other.values_;
    ordered_ = std::make_unique<OrderedTree>(*other.ordered_);
  }
  return *this;
}

RungRecord::RungRecord(RungRecord&&) noexcept = default;
RungRecord& RungRecord::operator=(RungRecord&&) noexcept = default;
RungRecord::~RungRecord() = default;

RungRecord::Rank RungRecord::RankOf(int64_t trial_id, double value) const {
  if (std::isnan(value)) return {true, 0.0, trial_id};
  return {false, goal_ == Goal::kMaximize ? -value : value, trial_id};
}

bool RungRecord::Record(int64_t trial_id, double value) {
  const auto [found, inserted] = values_.emplace(trial_id, value);
  if (!inserted) {
    ordered_->tree.erase(RankOf(trial_id, found->second));
    found->second = value;
  }
  ordered_->tree.insert(RankOf(trial_id, value));
  return inserted;
}

void RungRecord::Clear() {
  values_.clear();
  ordered_->tree.clear();
}

int64_t RungRecord::CountBetterThan(double value) const {
  Rank first_tie = RankOf(std::numeric_limits<int64_t>::min(), value);
  return static_cast<int64_t>(ordered_->tree.order_of_key(first_tie));
}

}  // namespace hpo::sched_internal
