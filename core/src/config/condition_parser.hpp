// Private to the config parser: the `conditions:` key beside `sweep:` (hpo's own, so that `sweep:`
// stays a valid W&B sweep), which makes a parameter exist only for some values of another.
#pragma once

#include <vector>

#include "hpo/config.hpp"
#include "hpo/status.hpp"
#include "yaml_fields.hpp"

namespace hpo::config_internal {

// Parses `field`, a mapping of CHILD: {PARENT: [VALUE, ...]} (a single VALUE also reads as a
// one-element list), into the `condition` of each child among `parameters`. BadInput
// "FILE:LINE: conditions.KEY: ..." when a child or a parent is not a parameter of
// sweep.parameters, a parent is not categorical (`values`), a value is not among the parent's,
// or the conditions form a cycle (a parameter conditioned on itself, a -> b -> a).
Status ParseConditions(const ErrorFormatter& errors, const Field& field,
                       std::vector<ParameterSpec>* parameters);

}  // namespace hpo::config_internal
