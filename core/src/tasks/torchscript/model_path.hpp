// task: torchscript's `model` path, torch-free: `model` names a TorchScript file, relative to the
// config's folder; `{name}` in it is replaced by the trial's value of parameter `name` (integers
// as 32, other numbers as FormatParamValue writes them, strings as they are), so that an
// architecture parameter selects among exported files: models/net_w{width}.pt.
#pragma once

#include <string>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/param.hpp"
#include "hpo/status.hpp"

namespace hpo {

// The placeholders of `pattern`, in order (each once). BadInput for an unclosed '{' or an empty
// name.
Status ModelPathPlaceholders(const std::string& pattern, std::vector<std::string>* names);
// `config`'s `model` as an absolute pattern (a relative one taken from the config's folder).
std::string ModelPathPattern(const SweepConfig& config);
// `pattern` with every placeholder replaced by the value in `params`; BadInput naming a
// placeholder without a value.
Status ExpandModelPath(const std::string& pattern, const Assignment& params, std::string* path);

}  // namespace hpo
