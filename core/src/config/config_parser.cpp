// ParseConfig and LoadConfigFile: the config's top level, its execution keys and its `sweep:`
// section. Parameters are parsed by parameter_parser.cpp and checked by parameter_checks.cpp,
// their conditions by condition_parser.cpp;
// early termination, search options, median stopping and budgets by section_parsers.cpp.
#include "hpo/config.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "common/file_io.hpp"
#include "common/list_text.hpp"
#include "condition_parser.hpp"
#include "hpo/task_catalog.hpp"
#include "parameter_parser.hpp"
#include "platforms/katib/experiment.hpp"
#include "platforms/sagemaker/tuning_job.hpp"
#include "section_parsers.hpp"
#include "yaml_fields.hpp"

namespace hpo {

namespace {

using config_internal::ErrorFormatter;
using config_internal::Field;
using config_internal::MappingFields;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// The task: `task:` names one of the catalog's; a sweep with W&B's `program` or `command` and no
// `task:` is a command sweep.
Status ReadTask(const ErrorFormatter& errors, const MappingFields& top, const MappingFields& sweep,
                const TaskCatalog& catalog, std::string* task) {
  const Field* named = top.Find("task");
  const Field* program = sweep.Find("program");
  if (program == nullptr) program = sweep.Find("command");
  if (named != nullptr && program != nullptr) {
    return errors.At(*program, "a sweep runs either a built-in `task:` (line " +
                                   std::to_string(named->line) + ") or your own `" + program->key +
                                   "`, not both");
  }
  std::string known;
  for (const std::string& name : catalog.names()) {
    if (name != kCommandTaskName) known += (known.empty() ? "" : ", ") + name;
  }
  if (named == nullptr) {
    if (program != nullptr) {
      *task = kCommandTaskName;
      return Status::Ok();
    }
    return top.Missing("task", known + ", or your own program as sweep.program / sweep.command");
  }
  HPO_RETURN_IF_ERROR(config_internal::ReadString(errors, *named, task));
  if (*task == kCommandTaskName || catalog.Find(*task) == nullptr) {
    return errors.At(*named, "must be one of " + known + ", got '" + *task +
                                 "' (your own program goes in sweep.program or sweep.command)");
  }
  return Status::Ok();
}

Status ReadNonEmptyString(const ErrorFormatter& errors, const Field& field, std::string* value) {
  HPO_RETURN_IF_ERROR(config_internal::ReadString(errors, field, value));
  if (value->empty()) return errors.At(field, "must not be empty");
  return Status::Ok();
}

// The execution keys of a wrapped config (execution->task is already set).
Status ParseExecution(const ErrorFormatter& errors, const MappingFields& top,
                      ExecutionSpec* execution) {
  const bool command = execution->task == kCommandTaskName;
  if (command && top.Has("ddp")) {
    return errors.At(*top.Find("ddp"),
                     "applies to the tasks hpo trains; a command sweep's program runs its own "
                     "data parallelism");
  }
  for (const char* key : config_internal::kCommandKeys) {
    if (!command && top.Has(key)) {
      return errors.At(*top.Find(key),
                       "applies to command sweeps (sweep.program or "
                       "sweep.command), not to task " +
                           execution->task);
    }
  }
  if (command && !top.Has("epochs")) execution->epochs = kUnboundedEpochs;
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
  };
  for (const IntegerKey& integer : integer_keys) {
    if (const Field* entry = top.Find(integer.key)) {
      HPO_RETURN_IF_ERROR(config_internal::ReadInteger(errors, *entry, integer.minimum,
                                                       integer.maximum, integer.target));
    }
  }
  execution->seed = static_cast<uint64_t>(seed);
  execution->gpus_requested = top.Has("trials_per_gpu");
  if (const Field* timeout = top.Find("peer_timeout_s")) {
    HPO_RETURN_IF_ERROR(
        config_internal::ReadFiniteNumber(errors, *timeout, &execution->peer_timeout_s));
    if (execution->peer_timeout_s <= 0.0) {
      return errors.At(
          *timeout, "must be > 0, got " + config_internal::FormatNumber(execution->peer_timeout_s));
    }
  }
  if (execution->trials_per_gpu > 1 && execution->ranks_per_trial != 1) {
    return errors.At(*top.Find("trials_per_gpu"),
                     "trials_per_gpu > 1 places one-rank trial groups on a shared GPU and needs "
                     "ranks_per_trial: 1, got ranks_per_trial " +
                         std::to_string(execution->ranks_per_trial));
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

Status ParseMetric(const ErrorFormatter& errors, const Field& field, const TaskDescription& task,
                   MetricSpec* metric) {
  MappingFields fields;
  HPO_RETURN_IF_ERROR(MappingFields::Read(errors, field, &fields));
  HPO_RETURN_IF_ERROR(
      fields.CheckKeys({"name", "goal", "target"}, {"impute", "impute_while_running"}));
  const Field* name = fields.Find("name");
  if (name == nullptr) return fields.Missing("name");
  HPO_RETURN_IF_ERROR(config_internal::ReadString(errors, *name, &metric->name));
  if (metric->name.empty()) return errors.At(*name, "must not be empty");
  if (!task.free_parameters()) {
    const std::vector<std::string> reported = task.MetricNames(SweepConfig());
    bool known = false;
    std::string accepted;
    for (const std::string& candidate : reported) {
      known = known || candidate == metric->name;
      accepted += (accepted.empty() ? "" : ", ") + candidate;
    }
    if (!known) {
      return errors.At(*name, "unknown metric '" + metric->name + "'; task " + task.name() +
                                  " reports " + accepted);
    }
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

// `metric`: one mapping (the only objective), or a list of them (several objectives, the first
// the primary one): distinct metrics, a `target` on the first only.
Status ParseObjectives(const ErrorFormatter& errors, const Field& field,
                       const TaskDescription& task, std::vector<MetricSpec>* objectives) {
  objectives->clear();
  if (!field.value.IsSequence()) {
    MetricSpec metric;
    HPO_RETURN_IF_ERROR(ParseMetric(errors, field, task, &metric));
    objectives->push_back(std::move(metric));
    return Status::Ok();
  }
  if (field.value.size() == 0) {
    return errors.At(field, "must be a {name, goal} mapping or a non-empty list of them");
  }
  for (size_t i = 0; i < field.value.size(); ++i) {
    const YAML::Node item = field.value[i];
    const std::string index = "[" + std::to_string(i) + "]";
    const Field entry{field.key + index, field.path + index, config_internal::LineOf(item), item};
    MetricSpec metric;
    HPO_RETURN_IF_ERROR(ParseMetric(errors, entry, task, &metric));
    for (const MetricSpec& earlier : *objectives) {
      if (earlier.name == metric.name) {
        return errors.At(entry, "metric '" + metric.name + "' is listed twice");
      }
    }
    if (i > 0 && metric.target) {
      return errors.At(entry,
                       "a target ends the sweep on the primary objective (the first "
                       "entry) only; drop it from '" +
                           metric.name + "'");
    }
    objectives->push_back(std::move(metric));
  }
  return Status::Ok();
}

Status ParseParameters(const ErrorFormatter& errors, const Field& field, SearchMethod method,
                       const TaskDescription& task, std::vector<ParameterSpec>* parameters) {
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

// The sweep section's keys: W&B's, including those only W&B's server or agent uses.
Status CheckSweepKeys(const MappingFields& fields) {
  return fields.CheckKeys(
      {"method", "metric", "parameters", "run_cap", "early_terminate", "name", "description",
       "project", "entity", "program", "command"},
      {"scheduler", "metrics", "controller", "job", "image_uri", "apiVersion", "kind"});
}

// The `sweep:` section (or a bare file's top level). `top_run_cap` is a `run_cap` beside
// `sweep:` (the wrapped form of a bare file run with --run-cap).
Status ParseSweep(const ErrorFormatter& errors, const MappingFields& fields,
                  const Field* top_run_cap, const ExecutionSpec& execution,
                  const TaskDescription& task, SweepSpec* sweep) {
  const Field* method = fields.Find("method");
  if (method == nullptr) return fields.Missing("method", "grid, random or bayes");
  HPO_RETURN_IF_ERROR(ParseMethod(errors, *method, &sweep->method));

  const Field* run_cap = fields.Find("run_cap");
  if (run_cap != nullptr && top_run_cap != nullptr) {
    return errors.At(*top_run_cap, "run_cap is set in the sweep too (line " +
                                       std::to_string(run_cap->line) + "); keep one");
  }
  if (run_cap == nullptr) run_cap = top_run_cap;
  if (run_cap != nullptr) {
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
  if (const Field* project = fields.Find("project")) {
    HPO_RETURN_IF_ERROR(config_internal::ReadString(errors, *project, &sweep->project));
  }
  if (const Field* entity = fields.Find("entity")) {
    HPO_RETURN_IF_ERROR(config_internal::ReadString(errors, *entity, &sweep->entity));
  }

  const Field* metric = fields.Find("metric");
  if (metric == nullptr) return fields.Missing("metric", "the study ranks trials by it");
  HPO_RETURN_IF_ERROR(ParseObjectives(errors, *metric, task, &sweep->objectives));
  sweep->metric = sweep->objectives.front();

  const Field* parameters = fields.Find("parameters");
  if (parameters == nullptr) return fields.Missing("parameters");
  return ParseParameters(errors, *parameters, sweep->method, task, &sweep->parameters);
}

// What several objectives cannot be combined with: the curve model (it predicts one metric's
// final value) and a warm start (earlier studies record one objective).
Status CheckSeveralObjectives(const ErrorFormatter& errors, const MappingFields& top,
                              const SweepConfig& config) {
  if (config.sweep.objectives.size() < 2) return Status::Ok();
  if (PredictsCurves(config.search.model)) {
    MappingFields search;
    HPO_RETURN_IF_ERROR(MappingFields::Read(errors, *top.Find("search"), &search));
    return errors.At(*search.Find("model"),
                     "curves predicts one metric's final value and cannot search several "
                     "objectives; use tpe or gp, or a single sweep.metric");
  }
  if (const Field* warm_start = top.Find("warm_start")) {
    return errors.At(*warm_start,
                     "a warm start seeds a sweep of one objective; sweep.metric lists " +
                         std::to_string(config.sweep.objectives.size()));
  }
  return Status::Ok();
}

// The keys beside `sweep:` that steer search and early stopping; checked after the sweep, as they
// depend on its method.
Status ParseSearchAndStopping(const ErrorFormatter& errors, const MappingFields& top,
                              const TaskDescription& task, SweepConfig* config) {
  if (const Field* search = top.Find("search")) {
    HPO_RETURN_IF_ERROR(config_internal::ParseSearchOptions(errors, *search, config->sweep.method,
                                                            &config->search));
    if (PredictsCurves(config->search.model) && config->execution.epochs == kUnboundedEpochs) {
      MappingFields fields;
      HPO_RETURN_IF_ERROR(MappingFields::Read(errors, *search, &fields));
      return errors.At(*fields.Find("model"),
                       "curves predicts each trial's value at its last step: a command sweep "
                       "needs `epochs` (the steps each trial reports in all)");
    }
    if (config->sweep.method == SearchMethod::kRandom && PredictsCurves(config->search.model) &&
        !config->sweep.early_terminate.enabled) {
      MappingFields fields;
      HPO_RETURN_IF_ERROR(MappingFields::Read(errors, *search, &fields));
      return errors.At(*fields.Find("model"),
                       "with method random, curves only decides which trials go on; it needs "
                       "sweep.early_terminate (type hyperband)");
    }
  }
  if (const Field* asha = top.Find("asha")) {
    HPO_RETURN_IF_ERROR(config_internal::ParseAsha(errors, *asha, &config->sweep.early_terminate));
  }
  if (const Field* median_stopping = top.Find("median_stopping")) {
    HPO_RETURN_IF_ERROR(config_internal::ParseMedianStopping(
        errors, *median_stopping, config->execution.epochs, &config->median_stopping));
    if (config->sweep.early_terminate.enabled && PredictsCurves(config->search.model)) {
      return errors.At(*median_stopping,
                       "search.model curves decides which trials go on from its predictions; "
                       "remove median_stopping or choose another model");
    }
  }
  ApplyDefaultSearch(top.Has("asha"), top.Has("median_stopping"), config);
  if (const Field* checkpoint = top.Find("checkpoint")) {
    HPO_RETURN_IF_ERROR(config_internal::ParseCheckpoint(errors, *checkpoint, &config->checkpoint));
  }
  if (const Field* ddp = top.Find("ddp")) {
    HPO_RETURN_IF_ERROR(config_internal::ParseDdp(errors, *ddp, &config->ddp));
  }
  if (const Field* warm_start = top.Find("warm_start")) {
    HPO_RETURN_IF_ERROR(config_internal::ParseWarmStart(errors, *warm_start, &config->warm_start));
  }
  HPO_RETURN_IF_ERROR(CheckSeveralObjectives(errors, top, *config));
  HPO_RETURN_IF_ERROR(config_internal::ParseBudget(errors, top, &config->budget));
  if (const Field* pbt = top.Find("pbt")) {
    HPO_RETURN_IF_ERROR(config_internal::ParsePbt(errors, *pbt, top, *config, task, &config->pbt));
  }
  return Status::Ok();
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

// An error the hpo config's parser found in a translated spec ("TRANSLATED_FILE:LINE: KEY: WHAT"),
// restated at the line of the spec's key that KEY (or the longest recorded key above it) was
// written from: "PATH:LINE: SPEC_KEY (read as KEY): WHAT". Unchanged when no recorded key covers
// KEY: it then still names the translated text, which the sweep's study keeps.
Status RestateTranslatedError(const Status& error, const std::string& translated_file,
                              const std::string& path,
                              const std::vector<TranslatedKeyOrigin>& origins) {
  const std::string& message = error.message();
  const std::string prefix = translated_file + ":";
  if (error.code() != Status::Code::kBadInput || message.rfind(prefix, 0) != 0) return error;
  const size_t line_end = message.find_first_not_of("0123456789", prefix.size());
  if (line_end == prefix.size() || line_end == std::string::npos ||
      message.compare(line_end, 2, ": ") != 0) {
    return error;
  }
  const size_t key_end = message.find(": ", line_end + 2);
  if (key_end == std::string::npos) return error;
  const std::string key = message.substr(line_end + 2, key_end - line_end - 2);
  const TranslatedKeyOrigin* best = nullptr;
  for (const TranslatedKeyOrigin& origin : origins) {
    const std::string& known = origin.hpo_key;
    const bool covers = key == known || (key.rfind(known, 0) == 0 && key.size() > known.size() &&
                                         (key[known.size()] == '.' || key[known.size()] == '['));
    if (covers && (best == nullptr || known.size() > best->hpo_key.size())) best = &origin;
  }
  if (best == nullptr) return error;
  return Status::BadInput(path + ":" + std::to_string(best->line) + ": " + best->spec_path +
                          " (read as " + key + "): " + message.substr(key_end + 2));
}

// The wrapped config equivalent to a bare W&B sweep file run with `bare`'s settings: the
// settings, then the file's text indented under `sweep:` (its leading document markers dropped).
std::string WrapBareSweep(const std::string& text, const std::string& path,
                          const BareSweepSettings& bare) {
  std::string wrapped = "# hpo sweep --config " + path +
                        ": a bare W&B sweep file (its text is under sweep:) with the settings "
                        "given on the command line\n";
  if (bare.ranks_per_trial)
    wrapped += "ranks_per_trial: " + std::to_string(*bare.ranks_per_trial) + "\n";
  if (bare.seed) wrapped += "seed: " + std::to_string(*bare.seed) + "\n";
  if (bare.run_cap) wrapped += "run_cap: " + std::to_string(*bare.run_cap) + "\n";
  wrapped += "sweep:\n";
  std::istringstream lines(text);
  std::string line;
  bool leading = true;
  while (std::getline(lines, line)) {
    if (leading && (line.rfind("---", 0) == 0 || line.rfind("%", 0) == 0)) continue;
    if (line == "...") continue;
    leading = leading && line.find_first_not_of(" \t\r") == std::string::npos;
    wrapped += line.empty() ? "\n" : "  " + line + "\n";
  }
  return wrapped;
}

// Reads `field` (a task option) into `options`: scalars under their dotted path.
Status ReadTaskOption(const ErrorFormatter& errors, const Field& field, const std::string& key,
                      TaskOptions* options) {
  if (field.value.IsScalar()) {
    options->values[key] = TaskOption{field.value.Scalar(), field.line};
    return Status::Ok();
  }
  if (!field.value.IsMap()) return errors.At(field, "must be a value or a mapping of values");
  MappingFields entries;
  HPO_RETURN_IF_ERROR(MappingFields::Read(errors, field, &entries));
  for (const Field& entry : entries.fields()) {
    HPO_RETURN_IF_ERROR(ReadTaskOption(errors, entry, key + "." + entry.key, options));
  }
  return Status::Ok();
}

// The option keys of the task `top` names (none when it names no known task: ReadTask says so).
std::vector<std::string> TaskOptionKeys(const MappingFields& top, const TaskCatalog& catalog) {
  const Field* task = top.Find("task");
  if (task == nullptr || !task->value.IsScalar()) return {};
  const TaskDescription* description = catalog.Find(task->value.Scalar());
  return description != nullptr ? description->option_keys() : std::vector<std::string>();
}

// A key beside `sweep:` that is not among `known` but is another task's option: BadInput saying
// which tasks take it (clearer than "unknown key" for, e.g., `data` in a command sweep).
Status RefuseOtherTasksOptions(const ErrorFormatter& errors, const MappingFields& top,
                               const std::vector<std::string>& known, const TaskCatalog& catalog) {
  const Field* named = top.Find("task");
  const std::string this_task = named != nullptr
                                    ? "task " + named->value.Scalar()
                                    : "a command sweep (its program reads its own settings: pass "
                                      "them as parameters)";
  for (const Field& field : top.fields()) {
    if (std::find(known.begin(), known.end(), field.key) != known.end()) continue;
    std::string owners;
    for (const std::string& name : catalog.names()) {
      const std::vector<std::string> keys = catalog.Find(name)->option_keys();
      if (std::find(keys.begin(), keys.end(), field.key) != keys.end()) {
        owners += (owners.empty() ? "" : ", ") + name;
      }
    }
    if (!owners.empty()) {
      return errors.At(field, "is an option of task " + owners + ", not of " + this_task);
    }
  }
  return Status::Ok();
}

// A wrapped config. With `on_this_machine` false (a study's stored config, read by the report)
// nothing is checked against this machine's files: a command sweep's program and interpreter
// are not looked up, and its command section is left unparsed.
Status ParseWrapped(const ErrorFormatter& errors, const MappingFields& top,
                    const TaskCatalog& catalog, bool on_this_machine, SweepConfig* parsed) {
  std::vector<std::string> known = {"sweep",
                                    "task",
                                    "epochs",
                                    "ranks_per_trial",
                                    "threads_per_rank",
                                    "trials_per_gpu",
                                    "seed",
                                    "output",
                                    "search",
                                    "median_stopping",
                                    "asha",
                                    "conditions",
                                    "time_budget_s",
                                    "max_failed_trials",
                                    "trial_retries",
                                    "checkpoint",
                                    "ddp",
                                    "warm_start",
                                    "pbt",
                                    "run_cap",
                                    "metrics",
                                    "metric_definitions",
                                    "interpreter",
                                    "trial_timeout_s",
                                    "terminate_grace_s",
                                    "peer_timeout_s",
                                    "cuda_visible_devices",
                                    "environment",
                                    "metrics_file",
                                    "sagemaker"};
  if (const Field* named = top.Find("task")) {  // a string, before its option keys are looked up
    std::string name;
    HPO_RETURN_IF_ERROR(config_internal::ReadString(errors, *named, &name));
  }
  const std::vector<std::string> option_keys = TaskOptionKeys(top, catalog);
  known.insert(known.end(), option_keys.begin(), option_keys.end());
  HPO_RETURN_IF_ERROR(RefuseOtherTasksOptions(errors, top, known, catalog));
  HPO_RETURN_IF_ERROR(top.CheckKeys(known));
  parsed->task_options.file = errors.file();
  for (const std::string& key : option_keys) {
    if (const Field* field = top.Find(key)) {
      HPO_RETURN_IF_ERROR(ReadTaskOption(errors, *field, key, &parsed->task_options));
    }
  }
  const Field* section = top.Find("sweep");
  if (section == nullptr) {
    if (!top.Has("task")) {
      return top.Missing("task", "a built-in task, or your own program as sweep.program");
    }
    return top.Missing("sweep", "a Weights & Biases sweep configuration");
  }
  MappingFields sweep;
  HPO_RETURN_IF_ERROR(MappingFields::Read(errors, *section, &sweep));
  HPO_RETURN_IF_ERROR(CheckSweepKeys(sweep));
  HPO_RETURN_IF_ERROR(ReadTask(errors, top, sweep, catalog, &parsed->execution.task));
  const TaskDescription& task = *catalog.Find(parsed->execution.task);
  HPO_RETURN_IF_ERROR(ParseExecution(errors, top, &parsed->execution));
  HPO_RETURN_IF_ERROR(
      ParseSweep(errors, sweep, top.Find("run_cap"), parsed->execution, task, &parsed->sweep));
  if (const Field* conditions = top.Find("conditions")) {
    HPO_RETURN_IF_ERROR(
        config_internal::ParseConditions(errors, *conditions, &parsed->sweep.parameters));
  }
  if (parsed->execution.task == kCommandTaskName && on_this_machine) {
    const std::string folder = std::filesystem::path(errors.file()).parent_path().string();
    HPO_RETURN_IF_ERROR(config_internal::ParseCommand(errors, sweep, &top, folder,
                                                      parsed->sweep.objectives, &parsed->command));
  }
  return ParseSearchAndStopping(errors, top, task, parsed);
}

// A bare W&B sweep file: its top level is the sweep; the execution settings come from `bare`.
Status ParseBare(const ErrorFormatter& errors, const MappingFields& sweep,
                 const TaskCatalog& catalog, const BareSweepSettings& bare, SweepConfig* parsed) {
  HPO_RETURN_IF_ERROR(CheckSweepKeys(sweep));
  if (!sweep.Has("program") && !sweep.Has("command")) {
    return sweep.Missing("program",
                         "a bare W&B sweep file runs your program: give `program` "
                         "(or `command`), or wrap the sweep in an hpo config with a "
                         "`task:`");
  }
  if (!sweep.Has("run_cap") && !bare.run_cap && sweep.Has("method")) {
    const Field* method = sweep.Find("method");
    if (method->value.IsScalar() && method->value.Scalar() != "grid") {
      return Status::BadInput(errors.file() + ": the sweep has no run_cap, and " +
                              method->value.Scalar() +
                              " search needs a budget: pass --run-cap N (the most trials to run)");
    }
  }
  if (bare.run_cap && sweep.Has("run_cap")) {
    return errors.At(*sweep.Find("run_cap"), "the file sets run_cap; drop --run-cap or the key");
  }
  parsed->execution.task = kCommandTaskName;
  parsed->execution.epochs = kUnboundedEpochs;
  if (bare.ranks_per_trial) parsed->execution.ranks_per_trial = *bare.ranks_per_trial;
  if (bare.seed) parsed->execution.seed = static_cast<uint64_t>(*bare.seed);
  const TaskDescription& task = *catalog.Find(kCommandTaskName);
  const int64_t run_cap = bare.run_cap.value_or(0);
  const Field cap_field{"run_cap", "run_cap", 0, YAML::Node(std::to_string(run_cap))};
  HPO_RETURN_IF_ERROR(ParseSweep(errors, sweep, bare.run_cap ? &cap_field : nullptr,
                                 parsed->execution, task, &parsed->sweep));
  const std::string folder = std::filesystem::path(errors.file()).parent_path().string();
  return config_internal::ParseCommand(errors, sweep, nullptr, folder, parsed->sweep.objectives,
                                       &parsed->command);
}

// A Katib Experiment or SageMaker tuning job -> the hpo config text it reads as. The translators
// check the shape of every key they read; a value of the wrong shape they missed (a list or text
// where a mapping belongs) still ends as an error at its line, never as an uncaught exception.
Status TranslateForeignSpec(const ErrorFormatter& errors, const YAML::Node& root, bool katib,
                            std::string* translated, TranslationNotes* notes) {
  try {
    return katib ? TranslateKatibExperiment(errors, root, errors.file(), translated, notes)
                 : TranslateSageMakerTuningJob(errors, root, errors.file(), translated, notes);
  } catch (const YAML::Exception& e) {
    const int line = e.mark.is_null() ? 1 : e.mark.line + 1;
    return Status::BadInput(errors.file() + ":" + std::to_string(line) + ": this " +
                            (katib ? "Katib Experiment" : "SageMaker tuning job") +
                            " has a value of the wrong shape here (" + e.msg + ")");
  }
}

}  // namespace

void ApplyDefaultSearch(bool has_asha, bool has_median_stopping, SweepConfig* config) {
  if (config->sweep.method != SearchMethod::kBayes) return;
  const bool single = config->sweep.objectives.size() <= 1;
  if (!config->sweep.early_terminate.enabled) {
    if (!has_median_stopping && single && !config->search.sampler_given &&
        config->search.model == BayesModel::kTpe) {
      config->search.sampler = RandomSampler::kSobol;
    }
    return;
  }
  if (config->search.model_given || has_asha || has_median_stopping || !single ||
      config->execution.epochs == kUnboundedEpochs) {
    return;
  }
  config->search.model = BayesModel::kCurvesTpe;
}

Status ParseConfig(const std::string& text, const std::string& path, SweepConfig* config) {
  return ParseConfig(text, path, BuiltinTaskCatalog(), BareSweepSettings(), config);
}

Status ParseConfig(const std::string& text, const std::string& path, const TaskCatalog& catalog,
                   const BareSweepSettings& bare, SweepConfig* config) {
  const ErrorFormatter errors(path);
  YAML::Node root;
  HPO_RETURN_IF_ERROR(ParseYaml(errors, text, &root));
  if (!root.IsMap()) {
    return errors.At(std::max(1, config_internal::LineOf(root)), "",
                     "the config must be a YAML mapping holding `sweep:` (a W&B sweep) and its "
                     "settings, or a bare W&B sweep file");
  }
  const bool katib = IsKatibExperiment(root);
  if (katib || IsSageMakerTuningJob(root)) {
    if (bare.any()) {
      return Status::BadInput(path + " is a " +
                              (katib ? "Katib Experiment" : "SageMaker tuning job") +
                              ": --run-cap, --seed and --ranks-per-trial are for a bare W&B "
                              "sweep file (the spec's own keys set them)");
    }
    std::string translated;
    TranslationNotes notes;
    HPO_RETURN_IF_ERROR(TranslateForeignSpec(errors, root, katib, &translated, &notes));
    SweepConfig parsed;
    const std::string translated_file = path + " (as the hpo config it reads as)";
    const Status translated_parse =
        ParseConfig(translated, translated_file, catalog, BareSweepSettings(), &parsed);
    if (!translated_parse.ok()) {
      return RestateTranslatedError(translated_parse, translated_file, path, notes.origins);
    }
    parsed.path = path;
    parsed.ignored_keys = std::move(notes.ignored);
    *config = std::move(parsed);
    return Status::Ok();
  }
  const Field root_field{"", "", config_internal::LineOf(root), root};
  MappingFields top;
  HPO_RETURN_IF_ERROR(MappingFields::Read(errors, root_field, &top));
  SweepConfig parsed;
  parsed.path = path;
  parsed.text = text;
  const bool is_bare = !top.Has("sweep") && (top.Has("method") || top.Has("parameters"));
  if (is_bare) {
    HPO_RETURN_IF_ERROR(ParseBare(errors, top, catalog, bare, &parsed));
    parsed.text = WrapBareSweep(text, path, bare);
  } else {
    if (bare.any()) {
      const char* flag = bare.run_cap ? "--run-cap" : bare.seed ? "--seed" : "--ranks-per-trial";
      return Status::BadInput(std::string(flag) + " is for a bare W&B sweep file, and " + path +
                              " is an hpo config (it has `sweep:`): set run_cap, seed and "
                              "ranks_per_trial in it instead");
    }
    HPO_RETURN_IF_ERROR(ParseWrapped(errors, top, catalog, /*on_this_machine=*/true, &parsed));
  }
  const TaskDescription& task = *catalog.Find(parsed.execution.task);
  parsed.metric_names = task.MetricNames(parsed);
  for (const MetricSpec& objective : parsed.sweep.objectives) {
    if (std::find(parsed.metric_names.begin(), parsed.metric_names.end(), objective.name) !=
        parsed.metric_names.end()) {
      continue;
    }
    return Status::BadInput(path + ": sweep.metric.name: unknown metric '" + objective.name +
                            "'; task " + task.name() + " with this config reports " +
                            Join(parsed.metric_names));
  }
  HPO_RETURN_IF_ERROR(task.CheckOptions(parsed));
  *config = std::move(parsed);
  return Status::Ok();
}

Status ParseStoredConfig(const std::string& text, const TaskCatalog& catalog, SweepConfig* config) {
  const ErrorFormatter errors("the study's config");
  YAML::Node root;
  HPO_RETURN_IF_ERROR(ParseYaml(errors, text, &root));
  const Field root_field{"", "", config_internal::LineOf(root), root};
  MappingFields top;
  HPO_RETURN_IF_ERROR(MappingFields::Read(errors, root_field, &top));
  SweepConfig parsed;
  parsed.text = text;
  HPO_RETURN_IF_ERROR(ParseWrapped(errors, top, catalog, /*on_this_machine=*/false, &parsed));
  *config = std::move(parsed);
  return Status::Ok();
}

Status LoadConfigFile(const std::string& path, SweepConfig* config) {
  return LoadConfigFile(path, BuiltinTaskCatalog(), BareSweepSettings(), config);
}

Status LoadConfigFile(const std::string& path, const TaskCatalog& catalog,
                      const BareSweepSettings& bare, SweepConfig* config) {
  std::string text;
  HPO_RETURN_IF_ERROR(ReadWholeFile(path, "config", &text));
  return ParseConfig(text, path, catalog, bare, config);
}

}  // namespace hpo
