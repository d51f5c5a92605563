// task: synthetic, torch-free: the built-in classifier's description and its `synthetic:` section.
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tasks/builtin_tasks.hpp"
#include "tasks/classifier_description.hpp"
#include "tasks/synthetic/options.hpp"

namespace hpo {
namespace {

constexpr char kSection[] = "synthetic";

}  // namespace

Status ReadSyntheticOptions(const TaskOptions& options, SyntheticOptions* read) {
  *read = SyntheticOptions();
  HPO_RETURN_IF_ERROR(options.CheckSection(
      kSection, {"train_samples", "val_samples", "test_samples", "features", "classes", "noise"}));
  const auto key = [](const char* name) { return std::string(kSection) + "." + name; };
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const std::pair<const char*, int64_t*> sizes[] = {{"train_samples", &read->train_samples},
                                                    {"val_samples", &read->val_samples},
                                                    {"test_samples", &read->test_samples},
                                                    {"features", &read->features}};
  for (const auto& [name, target] : sizes) {
    HPO_RETURN_IF_ERROR(options.GetInteger(key(name), 1, kMax, *target, target));
  }
  HPO_RETURN_IF_ERROR(options.GetInteger(key("classes"), 2, kMax, read->classes, &read->classes));
  return options.GetNumber(key("noise"), 0.0, read->noise, &read->noise);
}

namespace tasks::synthetic {

std::shared_ptr<const TaskDescription> Describe() {
  static const auto kDescription = std::make_shared<const ClassifierDescription>(
      "synthetic", std::vector<std::string>{kSection}, [](const TaskOptions& options) {
        SyntheticOptions read;
        return ReadSyntheticOptions(options, &read);
      });
  return kDescription;
}

}  // namespace tasks::synthetic
}  // namespace hpo
