#include "metric_reader.hpp"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

namespace hpo {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool IsStepKey(std::string_view name) {
  return name == "epoch" || name == "step" || name == "_step";
}

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '|' ||
         c == '/' || c == '@' || c == '-';
}

// The whole of `text` (spaces around allowed) as a number: decimal, exponent, and the spellings
// of Python's json.dumps and repr for non-finite values.
bool ParseNumber(std::string text, double* value) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  size_t start = 0;
  while (start < text.size() && std::isspace(static_cast<unsigned char>(text[start]))) ++start;
  text = text.substr(start);
  if (text.empty()) return false;
  if (text == "NaN" || text == "nan" || text == "-nan") {
    *value = kNaN;
    return true;
  }
  if (text == "Infinity" || text == "inf") {
    *value = std::numeric_limits<double>::infinity();
    return true;
  }
  if (text == "-Infinity" || text == "-inf") {
    *value = -std::numeric_limits<double>::infinity();
    return true;
  }
  const char first = text[0];
  if (!(std::isdigit(static_cast<unsigned char>(first)) || first == '-' || first == '+' ||
        first == '.')) {
    return false;
  }
  char* end = nullptr;
  *value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

}  // namespace

Status CheckMetricDefinitions(const std::vector<MetricDefinition>& definitions) {
  for (size_t i = 0; i < definitions.size(); ++i) {
    const std::string where = "metric_definitions[" + std::to_string(i) + "].regex: ";
    try {
      const std::regex regex(definitions[i].regex, std::regex::ECMAScript);
      if (regex.mark_count() < 1) {
        return Status::BadInput(where + "'" + definitions[i].regex +
                                "' has no capture group (the value is the first group)");
      }
    } catch (const std::regex_error& error) {
      return Status::BadInput(where + "'" + definitions[i].regex +
                              "' is not a regular expression: " + error.what());
    }
  }
  return Status::Ok();
}

Status MetricReader::Create(std::vector<std::string> columns, std::string objective,
                            const std::vector<MetricDefinition>& definitions,
                            MetricReader* reader) {
  HPO_RETURN_IF_ERROR(CheckMetricDefinitions(definitions));
  MetricReader made;
  for (size_t i = 0; i < columns.size(); ++i) made.column_index_[columns[i]] = i;
  if (made.column_index_.count(objective) == 0) {
    return Status::BadInput("the metric '" + objective + "' is not among the recorded metrics");
  }
  made.columns_ = std::move(columns);
  made.objective_ = std::move(objective);
  for (const MetricDefinition& definition : definitions) {
    made.definitions_.push_back({definition.name, std::regex(definition.regex)});
  }
  made.pending_.assign(made.columns_.size(), kNaN);
  *reader = std::move(made);
  return Status::Ok();
}

void MetricReader::Report(const std::string& name, double value, bool* objective_seen) {
  if (IsStepKey(name)) {
    if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 9.0e15) {
      pending_step_ = static_cast<int64_t>(value);
    }
    return;
  }
  const auto found = column_index_.find(name);
  if (found == column_index_.end()) {
    undeclared_.insert(name);
    return;
  }
  pending_[found->second] = value;
  if (name == objective_) *objective_seen = true;
}

bool MetricReader::ReadJson(std::string_view line, bool* objective_seen) {
  size_t begin = 0;
  size_t end = line.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(line[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(line[end - 1]))) --end;
  if (end - begin < 2 || line[begin] != '{' || line[end - 1] != '}') return false;
  YAML::Node node;
  try {
    node = YAML::Load(std::string(line.substr(begin, end - begin)));
  } catch (const YAML::Exception&) {
    return false;
  }
  if (!node.IsMap()) return false;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar() || !entry.second.IsScalar()) continue;
    if (entry.second.Tag() == "!") continue;  // a quoted string, not a number
    double value = 0.0;
    if (ParseNumber(entry.second.Scalar(), &value)) {
      Report(entry.first.Scalar(), value, objective_seen);
    }
  }
  return true;
}

void MetricReader::ReadPairs(std::string_view line, bool* objective_seen) {
  for (size_t equals = line.find('='); equals != std::string_view::npos;
       equals = line.find('=', equals + 1)) {
    size_t name_end = equals;
    while (name_end > 0 && line[name_end - 1] == ' ') --name_end;
    size_t name_start = name_end;
    while (name_start > 0 && IsNameChar(line[name_start - 1])) --name_start;
    if (name_start == name_end) continue;
    const char first = line[name_start];
    if (!(std::isalpha(static_cast<unsigned char>(first)) || first == '_')) continue;
    const std::string name(line.substr(name_start, name_end - name_start));
    if (!IsStepKey(name) && column_index_.count(name) == 0) continue;
    size_t value_start = equals + 1;
    while (value_start < line.size() && line[value_start] == ' ') ++value_start;
    size_t value_end = value_start;
    while (value_end < line.size() &&
           (std::isalnum(static_cast<unsigned char>(line[value_end])) || line[value_end] == '.' ||
            line[value_end] == '-' || line[value_end] == '+')) {
      ++value_end;
    }
    double value = 0.0;
    if (ParseNumber(std::string(line.substr(value_start, value_end - value_start)), &value)) {
      Report(name, value, objective_seen);
    }
  }
}

void MetricReader::ReadLine(std::string_view line, std::vector<EpochMetrics>* steps) {
  bool objective_seen = false;
  const bool json =
      !line.empty() && line.find('{') != std::string_view::npos && ReadJson(line, &objective_seen);
  if (!json && line.find('=') != std::string_view::npos) ReadPairs(line, &objective_seen);
  if (!definitions_.empty()) {
    const std::string text(line);
    for (const Compiled& definition : definitions_) {
      for (auto match = std::sregex_iterator(text.begin(), text.end(), definition.regex);
           match != std::sregex_iterator(); ++match) {
        double value = 0.0;
        if ((*match)[1].matched && ParseNumber((*match)[1].str(), &value)) {
          Report(definition.name, value, &objective_seen);
        }
      }
    }
  }
  if (!objective_seen) return;
  EpochMetrics step;
  step.epoch = pending_step_ > last_step_ ? pending_step_ : last_step_ + 1;
  step.values = pending_;
  steps->push_back(std::move(step));
  last_step_ = steps->back().epoch;
  pending_.assign(columns_.size(), kNaN);
  pending_step_ = 0;
}

}  // namespace hpo
