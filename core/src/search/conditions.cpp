#include "conditions.hpp"

#include <algorithm>
#include <functional>
#include <utility>

namespace hpo {

namespace {

size_t IndexOf(const std::vector<ParameterSpec>& parameters, const std::string& name) {
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (parameters[i].name == name) return i;
  }
  return parameters.size();
}

bool SameCondition(const ParameterSpec& a, const ParameterSpec& b) {
  if (!a.condition || !b.condition) return !a.condition && !b.condition;
  return a.condition->parent == b.condition->parent && a.condition->values == b.condition->values;
}

}  // namespace

bool HasConditions(const std::vector<ParameterSpec>& parameters) {
  return std::any_of(parameters.begin(), parameters.end(), [](const ParameterSpec& parameter) {
    return parameter.condition.has_value();
  });
}

std::vector<bool> ActiveParameters(const std::vector<ParameterSpec>& parameters,
                                   const Assignment& assignment) {
  std::vector<bool> active(parameters.size(), true);
  std::vector<bool> known(parameters.size(), false);
  // Depth-first along the parents; the config parser refused cycles, and `depth` bounds the walk
  // all the same.
  const std::function<bool(size_t, size_t)> resolve = [&](size_t i, size_t depth) -> bool {
    if (known[i]) return active[i];
    const ParameterSpec& parameter = parameters[i];
    bool is_active = true;
    if (parameter.condition && depth <= parameters.size()) {
      const size_t parent = IndexOf(parameters, parameter.condition->parent);
      const ParamValue* value = FindParam(assignment, parameter.condition->parent);
      const std::vector<ParamValue>& allowed = parameter.condition->values;
      is_active = parent < parameters.size() && value != nullptr && resolve(parent, depth + 1) &&
                  std::find(allowed.begin(), allowed.end(), *value) != allowed.end();
    }
    known[i] = true;
    active[i] = is_active;
    return is_active;
  };
  for (size_t i = 0; i < parameters.size(); ++i) resolve(i, 0);
  return active;
}

Assignment DropInactive(const std::vector<ParameterSpec>& parameters, Assignment assignment) {
  if (!HasConditions(parameters)) return assignment;
  const std::vector<bool> active = ActiveParameters(parameters, assignment);
  Assignment kept;
  kept.reserve(assignment.size());
  for (NamedValue& entry : assignment) {
    const size_t index = IndexOf(parameters, entry.name);
    if (index == parameters.size() || active[index]) kept.push_back(std::move(entry));
  }
  return kept;
}

std::vector<size_t> ParentsFirstOrder(const std::vector<ParameterSpec>& parameters) {
  std::vector<size_t> order;
  std::vector<bool> placed(parameters.size(), false);
  const std::function<void(size_t, size_t)> place = [&](size_t i, size_t depth) {
    if (placed[i] || depth > parameters.size()) return;
    if (parameters[i].condition) {
      const size_t parent = IndexOf(parameters, parameters[i].condition->parent);
      if (parent < parameters.size()) place(parent, depth + 1);
    }
    if (!placed[i]) order.push_back(i);
    placed[i] = true;
  };
  for (size_t i = 0; i < parameters.size(); ++i) place(i, 0);
  return order;
}

std::vector<size_t> ConditionGroups(const std::vector<ParameterSpec>& parameters) {
  std::vector<size_t> groups(parameters.size());
  std::vector<size_t> representatives;  // per group, its first parameter
  for (size_t i = 0; i < parameters.size(); ++i) {
    size_t group = 0;
    while (group < representatives.size() &&
           !SameCondition(parameters[representatives[group]], parameters[i])) {
      ++group;
    }
    if (group == representatives.size()) representatives.push_back(i);
    groups[i] = group;
  }
  return groups;
}

std::string ConditionsFingerprint(const std::vector<ParameterSpec>& parameters) {
  std::string fingerprint;
  for (const ParameterSpec& parameter : parameters) {
    if (!parameter.condition) continue;
    fingerprint += " " + parameter.name + "?" + parameter.condition->parent + "=";
    for (size_t v = 0; v < parameter.condition->values.size(); ++v) {
      fingerprint += (v == 0 ? "" : "|") + FormatParamValueExact(parameter.condition->values[v]);
    }
  }
  return fingerprint;
}

}  // namespace hpo
