// Private to hpo_core: which parameters of a sweep exist in a trial (`conditions:`, see
// ParameterCondition in hpo/config.hpp), the one rule every searcher applies. A parameter is
// active when it has no condition, or when its parent is active and the trial's value of the
// parent is among the condition's values. Searchers draw or model every parameter and drop the
// inactive ones, so an Assignment holds exactly the active parameters, in config order.
// Preconditions: the parameters passed the config parser (parents exist, no cycles). Pure
// functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/param.hpp"

namespace hpo {

// Whether any parameter has a condition.
bool HasConditions(const std::vector<ParameterSpec>& parameters);

// One flag per parameter: whether it is active for `assignment` (its parents' values are read from
// it; a parent missing from it is inactive).
std::vector<bool> ActiveParameters(const std::vector<ParameterSpec>& parameters,
                                   const Assignment& assignment);

// `assignment` without the parameters that are inactive for it (config order kept).
Assignment DropInactive(const std::vector<ParameterSpec>& parameters, Assignment assignment);

// The parameters' indices with every parent before its children: config order where it is
// already so, a parent otherwise moved just before its first child.
std::vector<size_t> ParentsFirstOrder(const std::vector<ParameterSpec>& parameters);

// Per parameter, its condition group: parameters present in exactly the same trials (the same
// condition, or none) share one; groups are numbered 0, 1, ... by first appearance in config
// order, so the unconditional parameters of a sweep whose first parameter has no condition are
// group 0, and a sweep without conditions is one group.
std::vector<size_t> ConditionGroups(const std::vector<ParameterSpec>& parameters);

// " name?parent=v1|v2" per conditional parameter (empty without conditions): appended to the
// searchers' fingerprints so that a state saved under other conditions is refused.
std::string ConditionsFingerprint(const std::vector<ParameterSpec>& parameters);

}  // namespace hpo
