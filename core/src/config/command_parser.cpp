// ParseCommand: a command sweep's `program`, `command` and the keys beside `sweep:` that say how
// to run the program and read its metrics.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "parameter_parser.hpp"
#include "platforms/katib/metrics_file.hpp"
#include "program/command_line.hpp"
#include "program/metric_reader.hpp"
#include "section_parsers.hpp"

namespace hpo::config_internal {

namespace {

namespace fs = std::filesystem;

// Where execvp would find `name` (one with a '/' is a path), or "" when nowhere.
std::string FindExecutable(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) {
    return access(name.c_str(), X_OK) == 0 && !fs::is_directory(name) ? name : "";
  }
  const char* path = std::getenv("PATH");
  std::string folders = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= folders.size()) {
    size_t end = folders.find(':', start);
    if (end == std::string::npos) end = folders.size();
    const std::string folder = folders.substr(start, end - start);
    const std::string candidate = (fs::path(folder.empty() ? "." : folder) / name).string();
    if (access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) return candidate;
    start = end + 1;
  }
  return "";
}

Status ReadStringList(const ErrorFormatter& errors, const Field& field,
                      std::vector<std::string>* items) {
  std::vector<Field> entries;
  HPO_RETURN_IF_ERROR(ReadValueList(errors, field, &entries));
  items->clear();
  for (const Field& entry : entries) {
    if (!entry.value.IsScalar() || ResolveScalar(entry.value) == ScalarKind::kNull) {
      return errors.At(entry, "must be a string");
    }
    items->push_back(entry.value.Scalar());
  }
  return Status::Ok();
}

Status ParseMetricDefinitions(const ErrorFormatter& errors, const Field& field,
                              const std::vector<MetricSpec>& objectives,
                              const std::vector<std::string>& metrics,
                              std::vector<MetricRegex>* definitions) {
  if (!field.value.IsSequence() || field.value.size() == 0) {
    return errors.At(field, "must be a non-empty list of {name, regex}");
  }
  for (size_t i = 0; i < field.value.size(); ++i) {
    const YAML::Node item = field.value[i];
    const std::string index = "[" + std::to_string(i) + "]";
    const Field entry{field.key + index, field.path + index, LineOf(item), item};
    MappingFields fields;
    HPO_RETURN_IF_ERROR(MappingFields::Read(errors, entry, &fields));
    // SageMaker's MetricDefinitions spell the keys Name and Regex.
    HPO_RETURN_IF_ERROR(fields.CheckKeys({"name", "regex", "Name", "Regex"}));
    const Field* name = nullptr;
    const Field* regex = nullptr;
    for (const auto& [key, found] : {std::pair{"name", &name}, std::pair{"regex", &regex}}) {
      const std::string lower = key;
      std::string capitalised = lower;
      capitalised[0] = static_cast<char>(capitalised[0] - 'a' + 'A');
      const Field* plain = fields.Find(lower);
      const Field* upper = fields.Find(capitalised);
      if (plain != nullptr && upper != nullptr) {
        return errors.At(*upper, "give `" + lower + "` or `" + capitalised + "`, not both");
      }
      *found = plain != nullptr ? plain : upper;
      if (*found == nullptr) return fields.Missing(lower);
    }
    MetricRegex definition;
    definition.line = entry.line;
    HPO_RETURN_IF_ERROR(ReadString(errors, *name, &definition.name));
    HPO_RETURN_IF_ERROR(ReadString(errors, *regex, &definition.regex));
    const bool step_key =
        definition.name == "epoch" || definition.name == "step" || definition.name == "_step";
    std::string objective_names;
    bool objective = false;
    for (const MetricSpec& spec : objectives) {
      objective = objective || spec.name == definition.name;
      objective_names += (objective_names.empty() ? "" : "', '") + spec.name;
    }
    if (!step_key && !objective &&
        std::find(metrics.begin(), metrics.end(), definition.name) == metrics.end()) {
      return errors.At(*name, "'" + definition.name + "' is neither the sweep metric '" +
                                  objective_names + "', listed in `metrics:`, nor a step key " +
                                  "(epoch, step, _step), so it would never be recorded");
    }
    const Status checked = CheckMetricDefinitions({{definition.name, definition.regex}});
    if (!checked.ok()) {
      // CheckMetricDefinitions names the entry by its index in the list it was given.
      std::string message = checked.message();
      const std::string prefix = "metric_definitions[0].regex: ";
      if (message.rfind(prefix, 0) == 0) message = message.substr(prefix.size());
      return errors.At(*regex, message);
    }
    definitions->push_back(std::move(definition));
  }
  return Status::Ok();
}

// Whether `name` is an environment variable's name as the shell takes it.
bool IsVariableName(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// The program the command starts: skips ${env}; checks the interpreter, the program or a literal
// executable exists.
Status CheckFirstExecutable(const ErrorFormatter& errors, const Field& at,
                            const Field* interpreter_field, const CommandSpec& spec) {
  const CommandContext context{spec.program, spec.interpreter, "", nullptr, {}};
  const std::vector<std::string> argv = ExpandCommand(spec.command, {}, context);
  size_t first = 0;
  if (first < argv.size() && argv[first] == "/usr/bin/env") ++first;
  while (first < argv.size() && argv[first].find('=') != std::string::npos &&
         IsVariableName(argv[first].substr(0, argv[first].find('=')))) {
    ++first;  // env's NAME=VALUE assignments (a value may hold anything, a path too)
  }
  if (first >= argv.size()) return errors.At(at, "the command runs nothing");
  const std::string& executable = argv[first];
  if (executable == spec.program) {
    if (access(spec.program.c_str(), X_OK) != 0) {
      return errors.At(at, "the command runs the program " + spec.program +
                               " directly, but it is not executable (chmod +x it, or start it "
                               "with ${interpreter})");
    }
    return Status::Ok();
  }
  if (FindExecutable(executable).empty()) {
    if (executable == spec.interpreter) {
      return errors.At(interpreter_field != nullptr ? *interpreter_field : at,
                       "the interpreter '" + executable +
                           "' is not on the PATH; set `interpreter:` beside `sweep:` (for "
                           "example python3)");
    }
    return errors.At(at, "'" + executable +
                             "' (what the command starts) is not an executable "
                             "on the PATH");
  }
  return Status::Ok();
}

// Variables hpo gives every program itself (torchrun's, the trial's): `environment:` cannot set
// them.
bool OwnedByHpo(const std::string& name) {
  static const std::set<std::string> kOwned = {
      "MASTER_ADDR", "MASTER_PORT",      "RANK",       "WORLD_SIZE",
      "LOCAL_RANK",  "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE",
      "ROLE_RANK",   "ROLE_WORLD_SIZE"};
  return kOwned.count(name) != 0 || name.rfind("HPO_", 0) == 0;
}

// `environment:` {NAME: value}: names as the shell takes them, values any scalar, as written.
Status ParseEnvironment(const ErrorFormatter& errors, const Field& field,
                        std::vector<std::pair<std::string, std::string>>* environment) {
  MappingFields entries;
  HPO_RETURN_IF_ERROR(MappingFields::Read(errors, field, &entries));
  for (const Field& entry : entries.fields()) {
    if (!IsVariableName(entry.key)) {
      return errors.At(entry,
                       "is not a variable name (letters, digits and '_', not first a digit)");
    }
    if (OwnedByHpo(entry.key)) {
      return errors.At(entry, "hpo sets " + entry.key +
                                  " for every trial itself (docs/tasks.md, the program's "
                                  "environment); it cannot be set here");
    }
    if (!entry.value.IsScalar()) {
      return errors.At(entry, "must be a string, got " + DescribeValue(entry.value));
    }
    environment->emplace_back(entry.key, entry.value.Scalar());
  }
  return Status::Ok();
}

// `metrics_file:` {path: absolute, format: TEXT|JSON, filters: [regex with two groups]}.
Status ParseMetricsFile(const ErrorFormatter& errors, const Field& field, MetricsFileSpec* spec) {
  MappingFields fields;
  HPO_RETURN_IF_ERROR(MappingFields::Read(errors, field, &fields));
  HPO_RETURN_IF_ERROR(fields.CheckKeys({"path", "format", "filters"}));
  const Field* path = fields.Find("path");
  if (path == nullptr) return fields.Missing("path", "the file the program writes its metrics to");
  HPO_RETURN_IF_ERROR(ReadString(errors, *path, &spec->path));
  if (!fs::path(spec->path).is_absolute() || fs::path(spec->path).filename().empty()) {
    return errors.At(*path, "must be an absolute path to a file, got '" + spec->path + "'");
  }
  if (const Field* format = fields.Find("format")) {
    std::string text;
    HPO_RETURN_IF_ERROR(ReadString(errors, *format, &text));
    if (text != "TEXT" && text != "JSON") {
      return errors.At(*format, "must be TEXT or JSON, got '" + text + "'");
    }
    spec->json = text == "JSON";
  }
  if (const Field* filters = fields.Find("filters")) {
    if (spec->json) return errors.At(*filters, "apply to format TEXT only");
    HPO_RETURN_IF_ERROR(ReadStringList(errors, *filters, &spec->filters));
    for (size_t i = 0; i < spec->filters.size(); ++i) {
      std::regex compiled;
      const Status compiling = CompileMetricsFileFilter(spec->filters[i], &compiled);
      if (!compiling.ok()) {
        return errors.At(*filters, "[" + std::to_string(i) + "] " + compiling.message());
      }
    }
  }
  return Status::Ok();
}

// `sagemaker:` {job_name, channels: {name: local folder}}: each folder must exist.
Status ParseSageMaker(const ErrorFormatter& errors, const Field& field, SageMakerSpec* spec) {
  MappingFields fields;
  HPO_RETURN_IF_ERROR(MappingFields::Read(errors, field, &fields));
  HPO_RETURN_IF_ERROR(fields.CheckKeys({"job_name", "channels"}));
  if (const Field* name = fields.Find("job_name")) {
    HPO_RETURN_IF_ERROR(ReadString(errors, *name, &spec->job_name));
  }
  if (const Field* channels = fields.Find("channels")) {
    MappingFields entries;
    HPO_RETURN_IF_ERROR(MappingFields::Read(errors, *channels, &entries));
    for (const Field& entry : entries.fields()) {
      std::string folder;
      HPO_RETURN_IF_ERROR(ReadString(errors, entry, &folder));
      if (folder.rfind("file://", 0) == 0) folder = folder.substr(7);
      std::error_code error;
      if (!fs::is_directory(folder, error)) {
        return errors.At(entry, "channel " + entry.key + ": no such folder: " + folder);
      }
      spec->channels.emplace_back(entry.key, fs::absolute(folder).lexically_normal().string());
    }
  }
  return Status::Ok();
}

// The keys beside `sweep:` that say what the program's platform gives it.
Status ParsePlatformKeys(const ErrorFormatter& errors, const MappingFields& top,
                         CommandSpec* spec) {
  if (const Field* environment = top.Find("environment")) {
    HPO_RETURN_IF_ERROR(ParseEnvironment(errors, *environment, &spec->environment));
  }
  if (const Field* metrics_file = top.Find("metrics_file")) {
    spec->metrics_file.emplace();
    HPO_RETURN_IF_ERROR(ParseMetricsFile(errors, *metrics_file, &*spec->metrics_file));
    if (!spec->metric_definitions.empty()) {
      return errors.At(*metrics_file,
                       "the metrics come from this file, not from the program's "
                       "output: drop `metric_definitions`");
    }
  }
  if (const Field* sagemaker = top.Find("sagemaker")) {
    spec->sagemaker.emplace();
    HPO_RETURN_IF_ERROR(ParseSageMaker(errors, *sagemaker, &*spec->sagemaker));
  }
  return Status::Ok();
}

bool UsesProgram(const std::vector<std::string>& command) {
  return std::find(command.begin(), command.end(), "${program}") != command.end();
}

}  // namespace

Status ParseCommand(const ErrorFormatter& errors, const MappingFields& sweep,
                    const MappingFields* top, const std::string& config_dir,
                    const std::vector<MetricSpec>& objectives, CommandSpec* spec) {
  const Field* command = sweep.Find("command");
  const Field* program = sweep.Find("program");
  if (command != nullptr) {
    HPO_RETURN_IF_ERROR(ReadStringList(errors, *command, &spec->command));
    const Status checked = CheckCommandTemplate(spec->command);
    if (!checked.ok()) return errors.At(*command, checked.message());
  } else {
    spec->command = DefaultCommandTemplate();
  }
  if (program != nullptr) {
    std::string text;
    HPO_RETURN_IF_ERROR(ReadString(errors, *program, &text));
    if (text.empty()) return errors.At(*program, "must not be empty");
    const fs::path resolved =
        fs::absolute(fs::path(text).is_absolute() ? fs::path(text) : fs::path(config_dir) / text)
            .lexically_normal();
    std::error_code error;
    if (!fs::is_regular_file(resolved, error)) {
      return errors.At(*program, "no such file: " + resolved.string() +
                                     " (a relative program is found from the config's folder)");
    }
    spec->program = resolved.string();
    spec->program_as_written = text;
  } else if (UsesProgram(spec->command)) {
    return errors.At(command != nullptr ? *command : sweep.fields().front(),
                     "the command uses ${program}, but the sweep has no `program`");
  }
  const Field* interpreter_field = top != nullptr ? top->Find("interpreter") : nullptr;
  if (top != nullptr) {
    if (const Field* interpreter = interpreter_field) {
      HPO_RETURN_IF_ERROR(ReadString(errors, *interpreter, &spec->interpreter));
      if (spec->interpreter.empty()) return errors.At(*interpreter, "must not be empty");
    }
    if (const Field* metrics = top->Find("metrics")) {
      HPO_RETURN_IF_ERROR(ReadStringList(errors, *metrics, &spec->metrics));
    }
    if (const Field* definitions = top->Find("metric_definitions")) {
      HPO_RETURN_IF_ERROR(ParseMetricDefinitions(errors, *definitions, objectives, spec->metrics,
                                                 &spec->metric_definitions));
    }
    if (const Field* timeout = top->Find("trial_timeout_s")) {
      double seconds = 0.0;
      HPO_RETURN_IF_ERROR(ReadFiniteNumber(errors, *timeout, &seconds));
      if (seconds <= 0.0) return errors.At(*timeout, "must be > 0");
      spec->trial_timeout_s = seconds;
    }
    if (const Field* grace = top->Find("terminate_grace_s")) {
      HPO_RETURN_IF_ERROR(ReadFiniteNumber(errors, *grace, &spec->terminate_grace_s));
      if (spec->terminate_grace_s < 0.0) return errors.At(*grace, "must be >= 0");
    }
    if (const Field* cuda = top->Find("cuda_visible_devices")) {
      if (!cuda->value.IsScalar() || ResolveScalar(cuda->value) != ScalarKind::kBool) {
        return errors.At(*cuda, "must be true or false");
      }
      const std::string& text = cuda->value.Scalar();
      spec->cuda_visible_devices = text == "true" || text == "True" || text == "TRUE";
    }
    HPO_RETURN_IF_ERROR(ParsePlatformKeys(errors, *top, spec));
  }
  if (spec->interpreter.empty()) {
    spec->interpreter = FindExecutable("python").empty() ? "python3" : "python";
  }
  return CheckFirstExecutable(errors, command != nullptr ? *command : *program, interpreter_field,
                              *spec);
}

}  // namespace hpo::config_internal
