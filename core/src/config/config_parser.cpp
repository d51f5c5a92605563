// ParseConfig and LoadConfigFile: the config's top level, its execution keys and its `sweep:`
// section. Parameters are parsed by parameter_parser.cpp and checked by parameter_checks.cpp;
// early termination, search options, median stopping and budgets by section_parsers.cpp.
#include "hpo/config.hpp"

#include <algorithm>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "hpo/file_io.hpp"
#include "hpo/task_catalog.hpp"
#include "parameter_parser.hpp"
#include "section_parsers.hpp"
#include "yaml_fields.hpp"

namespace hpo {

namespace {

using config_internal::ErrorFormatter;
using config_internal::Field;
using config_internal::MappingFields;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kMaxValidationSamples = 59999;  // Fashion-MNIST has 60000 training images

Status ReadTask(const ErrorFormatter& errors, const Field& field, TaskKind* task) {
  std::string name;
  HPO_RETURN_IF_ERROR(config_internal::ReadString(errors, field, &name));
  for (TaskKind candidate : {TaskKind::kFashionMnist, TaskKind::kSynthetic}) {
    if (name == TaskKindName(candidate)) {
      *task = candidate;
      return Status::Ok();
    }
  }
  return errors.At(field, "must be one of fashion_mnist, synthetic, got '" + name + "'");
}

Status ReadNonEmptyString(const ErrorFormatter& errors, const Field& field, std::string* value) {
  HPO_RETURN_IF_ERROR(config_internal::ReadString(errors, field, value));
  if (value->empty()) return errors.At(field, "must not be empty");
  return Status::Ok();
}

Status ParseSynthetic(const ErrorFormatter& errors, const Field& field, SyntheticOptions* options) {
  MappingFields fields;
  HPO_RETURN_IF_ERROR(MappingFields::Read(errors, field, &fields));
  HPO_RETURN_IF_ERROR(fields.CheckKeys(
      {"train_samples", "val_samples", "test_samples", "features", "classes", "noise"}));
  const std::pair<const char*, int64_t*> sizes[] = {{"train_samples", &options->train_samples},
                                                    {"val_samples", &options->val_samples},
                                                    {"test_samples", &options->test_samples},
                                                    {"features", &options->features}};
  for (const auto& [key, target] : sizes) {
    if (const Field* entry = fields.Find(key)) {
      HPO_RETURN_IF_ERROR(config_internal::ReadInteger(errors, *entry, 1, kInt64Max, target));
    }
  }
  if (const Field* classes = fields.Find("classes")) {
    HPO_RETURN_IF_ERROR(
        config_internal::ReadInteger(errors, *classes, 2, kInt64Max, &options->classes));
  }
  if (const Field* noise = fields.Find("noise")) {
    HPO_RETURN_IF_ERROR(config_internal::ReadFiniteNumber(errors, *noise, &options->noise));
    if (options->noise < 0.0) return errors.At(*noise, "must be >= 0");
  }
  return Status::Ok();
}

Status ParseExecution(const ErrorFormatter& errors, const MappingFields& top,
                      ExecutionSpec* execution) {
  const Field* task = top.Find("task");
  if (task == nullptr) return top.Missing("task", "fashion_mnist or synthetic");
  HPO_RETURN_IF_ERROR(ReadTask(errors, *task, &execution->task));
  if (const Field* data = top.Find("data")) {
    HPO_RETURN_IF_ERROR(ReadNonEmptyString(errors, *data, &execution->data));
  }
  if (const Field* output = top.Find("output")) {
    HPO_RETURN_IF_ERROR(ReadNonEmptyString(errors, *output, &execution->output));
  }
  struct IntegerKey {
    const char* key;
    int64_t minimum;
    int64_t maximum;
    int64_t* target;
  };
  int64_t seed = 0;
  const IntegerKey integer_keys[] = {
      {"epochs", 1, kInt64Max, &execution->epochs},
      {"ranks_per_trial", 1, kInt64Max, &execution->ranks_per_trial},
      {"threads_per_rank", 1, kInt64Max, &execution->threads_per_rank},
      {"trials_per_gpu", 1, kInt64Max, &execution->trials_per_gpu},
      {"seed", 0, kInt64Max, &seed},
      {"validation_samples", 1, kMaxValidationSamples, &execution->validation_samples},
      {"train_samples", 0, kInt64Max, &execution->train_samples},
  };
  for (const IntegerKey& integer : integer_keys) {
    if (const Field* entry = top.Find(integer.key)) {
      HPO_RETURN_IF_ERROR(config_internal::ReadInteger(errors, *entry, integer.minimum,
                                                       integer.maximum, integer.target));
    }
  }
  execution->seed = static_cast<uint64_t>(seed);
  if (execution->trials_per_gpu > 1 && execution->ranks_per_trial != 1) {
    return errors.At(*top.Find("trials_per_gpu"),
                     "trials_per_gpu > 1 places one-rank trial groups on a shared GPU and needs "
                     "ranks_per_trial: 1, got ranks_per_trial " +
                         std::to_string(execution->ranks_per_trial));
  }
  if (const Field* synthetic = top.Find("synthetic")) {
    HPO_RETURN_IF_ERROR(ParseSynthetic(errors, *synthetic, &execution->synthetic));
  }
  return Status::Ok();
}

Status ParseMethod(const ErrorFormatter& errors, const Field& field, SearchMethod* method) {
  std::string name;
  HPO_RETURN_IF_ERROR(config_internal::ReadString(errors, field, &name));
  if (name == "grid") {
    *method = SearchMethod::kGrid;
  } else if (name == "random") {
    *method = SearchMethod::kRandom;
  } else if (name == "bayes") {
    *method = SearchMethod::kBayes;
  } else if (name == "custom") {
    return errors.At(field,
                     "method 'custom' is not supported yet (supported: grid, random, bayes)");
  } else {
    return errors.At(field, "must be grid, random or bayes, got '" + name + "'");
  }
  return Status::Ok();
}

Status ParseMetric(const ErrorFormatter& errors, const Field& field, TaskKind task,
                   MetricSpec* metric) {
  MappingFields fields;
  HPO_RETURN_IF_ERROR(MappingFields::Read(errors, field, &fields));
  HPO_RETURN_IF_ERROR(
      fields.CheckKeys({"name", "goal", "target"}, {"impute", "impute_while_running"}));
  const Field* name = fields.Find("name");
  if (name == nullptr) return fields.Missing("name");
  HPO_RETURN_IF_ERROR(config_internal::ReadString(errors, *name, &metric->name));
  const std::vector<std::string>& reported = TaskMetricNames(task);
  bool known = false;
  std::string accepted;
  for (const std::string& candidate : reported) {
    known = known || candidate == metric->name;
    accepted += (accepted.empty() ? "" : ", ") + candidate;
  }
  if (!known) {
    return errors.At(*name, "unknown metric '" + metric->name + "'; task " + TaskKindName(task) +
                                " reports " + accepted);
  }
  if (const Field* goal = fields.Find("goal")) {
    std::string text;
    HPO_RETURN_IF_ERROR(config_internal::ReadString(errors, *goal, &text));
    if (text == "minimize") {
      metric->goal = Goal::kMinimize;
    } else if (text == "maximize") {
      metric->goal = Goal::kMaximize;
    } else {
      return errors.At(*goal, "must be minimize or maximize, got '" + text + "'");
    }
  }
  if (const Field* target = fields.Find("target")) {
    double value = 0.0;
    HPO_RETURN_IF_ERROR(config_internal::ReadFiniteNumber(errors, *target, &value));
    metric->target = value;
  }
  return Status::Ok();
}

Status ParseParameters(const ErrorFormatter& errors, const Field& field, SearchMethod method,
                       TaskKind task, std::vector<ParameterSpec>* parameters) {
  MappingFields fields;
  HPO_RETURN_IF_ERROR(MappingFields::Read(errors, field, &fields));
  if (fields.fields().empty()) return errors.At(field, "must list at least one parameter");
  parameters->clear();
  for (const Field& entry : fields.fields()) {
    config_internal::ParsedParameter parsed;
    HPO_RETURN_IF_ERROR(config_internal::ParseParameter(errors, entry, &parsed));
    if (method == SearchMethod::kGrid) {
      HPO_RETURN_IF_ERROR(config_internal::CheckGridParameter(errors, parsed));
    }
    HPO_RETURN_IF_ERROR(config_internal::CheckParameterForTask(errors, task, parsed));
    parameters->push_back(std::move(parsed.spec));
  }
  return Status::Ok();
}

Status ParseSweep(const ErrorFormatter& errors, const MappingFields& top,
                  const ExecutionSpec& execution, SweepSpec* sweep) {
  const Field* section = top.Find("sweep");
  if (section == nullptr) return top.Missing("sweep", "a Weights & Biases sweep configuration");
  MappingFields fields;
  HPO_RETURN_IF_ERROR(MappingFields::Read(errors, *section, &fields));
  // project, entity, program and command tell the W&B agent what to run; they are accepted so a
  // W&B sweep file can be pasted verbatim, and ignored.
  HPO_RETURN_IF_ERROR(fields.CheckKeys(
      {"method", "metric", "parameters", "run_cap", "early_terminate", "name", "description",
       "project", "entity", "program", "command"},
      {"scheduler", "metrics", "controller", "job", "image_uri", "apiVersion", "kind"}));

  const Field* method = fields.Find("method");
  if (method == nullptr) return fields.Missing("method", "grid, random or bayes");
  HPO_RETURN_IF_ERROR(ParseMethod(errors, *method, &sweep->method));

  if (const Field* run_cap = fields.Find("run_cap")) {
    int64_t cap = 0;
    HPO_RETURN_IF_ERROR(config_internal::ReadInteger(errors, *run_cap, 1, kInt64Max, &cap));
    sweep->run_cap = cap;
  } else if (sweep->method != SearchMethod::kGrid) {
    return fields.Missing("run_cap", std::string(SearchMethodName(sweep->method)) +
                                         " search needs a cap on its number of trials");
  }
  if (const Field* early_terminate = fields.Find("early_terminate")) {
    HPO_RETURN_IF_ERROR(config_internal::ParseEarlyTerminate(
        errors, *early_terminate, execution.epochs, &sweep->early_terminate));
  }
  if (const Field* name = fields.Find("name")) {
    HPO_RETURN_IF_ERROR(config_internal::ReadString(errors, *name, &sweep->name));
  }
  if (const Field* description = fields.Find("description")) {
    HPO_RETURN_IF_ERROR(config_internal::ReadString(errors, *description, &sweep->description));
  }

  const Field* metric = fields.Find("metric");
  if (metric == nullptr) return fields.Missing("metric", "the study ranks trials by it");
  HPO_RETURN_IF_ERROR(ParseMetric(errors, *metric, execution.task, &sweep->metric));

  const Field* parameters = fields.Find("parameters");
  if (parameters == nullptr) return fields.Missing("parameters");
  return ParseParameters(errors, *parameters, sweep->method, execution.task, &sweep->parameters);
}

// The keys beside `sweep:` that steer search and early stopping; checked after the sweep, as they
// depend on its method.
Status ParseSearchAndStopping(const ErrorFormatter& errors, const MappingFields& top,
                              SweepConfig* config) {
  if (const Field* search = top.Find("search")) {
    HPO_RETURN_IF_ERROR(config_internal::ParseSearchOptions(errors, *search, config->sweep.method,
                                                            &config->search));
  }
  if (const Field* median_stopping = top.Find("median_stopping")) {
    HPO_RETURN_IF_ERROR(config_internal::ParseMedianStopping(
        errors, *median_stopping, config->execution.epochs, &config->median_stopping));
  }
  if (const Field* checkpoint = top.Find("checkpoint")) {
    HPO_RETURN_IF_ERROR(config_internal::ParseCheckpoint(errors, *checkpoint, &config->checkpoint));
  }
  if (const Field* ddp = top.Find("ddp")) {
    HPO_RETURN_IF_ERROR(config_internal::ParseDdp(errors, *ddp, &config->ddp));
  }
  return config_internal::ParseBudget(errors, top, &config->budget);
}

// Counts a stream's documents and where the second one starts, without building them.
class DocumentCounter final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ == 2) second_line_ = mark.line + 1;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

  int documents() const { return documents_; }
  int second_line() const { return second_line_; }

 private:
  int documents_ = 0;
  int second_line_ = 0;
};

Status ParseYaml(const ErrorFormatter& errors, const std::string& text, YAML::Node* root) {
  try {
    // Not YAML::LoadAll: yaml-cpp 0.7 loops forever on a stream that starts with a flow entry
    // (",", yaml-cpp issue 1040). Stopping after the second document is all a config needs.
    std::istringstream stream(text);
    YAML::Parser parser(stream);
    DocumentCounter counter;
    while (counter.documents() < 2 && parser.HandleNextDocument(counter)) {
    }
    if (counter.documents() > 1) {
      return Status::BadInput(
          errors.file() + ":" + std::to_string(counter.second_line()) +
          ": invalid YAML: a config holds one document; another one starts here "
          "(after a --- separator, or after stray text such as a leading ',')");
    }
    if (counter.documents() == 1) *root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    const int line = e.mark.is_null() ? 1 : e.mark.line + 1;
    return Status::BadInput(errors.file() + ":" + std::to_string(line) +
                            ": invalid YAML: " + e.msg);
  }
  return Status::Ok();
}

}  // namespace

Status ParseConfig(const std::string& text, const std::string& path, SweepConfig* config) {
  const ErrorFormatter errors(path);
  YAML::Node root;
  HPO_RETURN_IF_ERROR(ParseYaml(errors, text, &root));
  if (!root.IsMap()) {
    return errors.At(std::max(1, config_internal::LineOf(root)), "",
                     "the config must be a YAML mapping holding `sweep:` and `task:`");
  }
  const Field root_field{"", "", config_internal::LineOf(root), root};
  MappingFields top;
  HPO_RETURN_IF_ERROR(MappingFields::Read(errors, root_field, &top));
  HPO_RETURN_IF_ERROR(
      top.CheckKeys({"sweep", "task", "data", "epochs", "ranks_per_trial", "threads_per_rank",
                     "trials_per_gpu", "seed", "output", "validation_samples", "train_samples",
                     "synthetic", "search", "median_stopping", "time_budget_s", "max_failed_trials",
                     "trial_retries", "checkpoint", "ddp"}));
  SweepConfig parsed;
  parsed.path = path;
  parsed.text = text;
  HPO_RETURN_IF_ERROR(ParseExecution(errors, top, &parsed.execution));
  HPO_RETURN_IF_ERROR(ParseSweep(errors, top, parsed.execution, &parsed.sweep));
  HPO_RETURN_IF_ERROR(ParseSearchAndStopping(errors, top, &parsed));
  *config = std::move(parsed);
  return Status::Ok();
}

Status LoadConfigFile(const std::string& path, SweepConfig* config) {
  std::string text;
  HPO_RETURN_IF_ERROR(ReadWholeFile(path, "config", &text));
  return ParseConfig(text, path, config);
}

}  // namespace hpo
