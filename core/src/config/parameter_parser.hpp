// Private to the config parser: one entry of `sweep.parameters` (a W&B parameter) to a
// ParameterSpec, and the checks of a parsed parameter against a search method and a task.
#pragma once

#include <optional>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/status.hpp"
#include "hpo/task_catalog.hpp"
#include "yaml_fields.hpp"

namespace hpo::config_internal {

// A parsed parameter with where its parts were written, for later error messages.
struct ParsedParameter {
  ParameterSpec spec;
  Field field;                        // the parameter's own `name:` entry
  std::optional<Field> distribution;  // the `distribution:` entry when written
  std::optional<Field> min;           // the `min:` entry when written
  std::optional<Field> max;           // the `max:` entry when written
  std::vector<Field> value_fields;    // `value`, or each element of `values` ("values[i]")
};

// Parses `field` (key: parameter name, value: its W&B mapping) with W&B's rules: the
// distribution is explicit or inferred (value -> constant, values -> categorical, values +
// probabilities -> categorical_w_probabilities, integer min/max -> int_uniform, else uniform),
// only the keys the distribution takes are accepted, and values are typed (all integers ->
// kInt, all numbers -> kFloat, else kString).
Status ParseParameter(const ErrorFormatter& errors, const Field& field, ParsedParameter* parsed);

// A non-empty YAML list as one Field per element ("KEY[i]", with its own line); BadInput otherwise.
Status ReadValueList(const ErrorFormatter& errors, const Field& field, std::vector<Field>* items);

// Grid search enumerates constants, categoricals and int_uniform ranges; anything else is an
// error naming the parameter.
Status CheckGridParameter(const ErrorFormatter& errors, const ParsedParameter& parameter);

// The task must know the hyperparameter, and every value the parameter can take must be of the
// hyperparameter's type and inside its valid range (or among its choices).
Status CheckParameterForTask(const ErrorFormatter& errors, const TaskDescription& task,
                             const ParsedParameter& parameter);

}  // namespace hpo::config_internal
