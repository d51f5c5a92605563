#include "tasks/command/test_results.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdint>

#include "config/yaml_fields.hpp"

namespace hpo {

namespace {

// `node` as a finite number (JSON numbers arrive as yaml-cpp scalars).
bool ReadNumber(const YAML::Node& node, double* value) {
  return node.IsScalar() && config_internal::ParseNumberScalar(node.Scalar(), value) &&
         std::isfinite(*value);
}

Status ReadTable(const std::string& where, const std::string& name, const YAML::Node& node,
                 MetricTable* table) {
  const YAML::Node rows = node["rows"];
  if (!rows || !rows.IsSequence() || rows.size() == 0) {
    return Status::BadInput(where + ": " + name + ".rows: must be a non-empty list of rows");
  }
  table->name = name;
  table->rows = static_cast<int64_t>(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    const std::string row_where = where + ": " + name + ".rows[" + std::to_string(r) + "]";
    if (!rows[r].IsSequence() || rows[r].size() == 0) {
      return Status::BadInput(row_where + ": must be a non-empty list of numbers");
    }
    if (r == 0) table->columns = static_cast<int64_t>(rows[r].size());
    if (static_cast<int64_t>(rows[r].size()) != table->columns) {
      return Status::BadInput(row_where + ": has " + std::to_string(rows[r].size()) +
                              " numbers, the first row " + std::to_string(table->columns));
    }
    for (size_t c = 0; c < rows[r].size(); ++c) {
      double value = 0.0;
      if (!ReadNumber(rows[r][c], &value)) {
        return Status::BadInput(row_where + "[" + std::to_string(c) + "]: must be a number");
      }
      table->values.push_back(value);
    }
  }
  if (const YAML::Node labels = node["labels"]) {
    if (!labels.IsSequence() || static_cast<int64_t>(labels.size()) != table->columns) {
      return Status::BadInput(where + ": " + name + ".labels: must be a list of " +
                              std::to_string(table->columns) + " names, one per column");
    }
    for (const YAML::Node& label : labels) {
      if (!label.IsScalar()) {
        return Status::BadInput(where + ": " + name + ".labels: must hold names");
      }
      table->labels.push_back(label.Scalar());
    }
  }
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    if (key != "rows" && key != "labels") {
      return Status::BadInput(where + ": " + name + "." + key +
                              ": not part of a table (rows, labels)");
    }
  }
  return Status::Ok();
}

}  // namespace

Status ReadTestResults(const std::string& path,
                       std::vector<std::pair<std::string, double>>* metrics,
                       std::vector<MetricTable>* tables) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);  // JSON is YAML: one parser for both
  } catch (const YAML::Exception& error) {
    return Status::BadInput(path + ": not JSON: " + error.msg);
  }
  if (!root.IsMap()) return Status::BadInput(path + ": must be one JSON object");
  for (const auto& entry : root) {
    const std::string name = entry.first.Scalar();
    double value = 0.0;
    if (ReadNumber(entry.second, &value)) {
      metrics->emplace_back(name.rfind("test_", 0) == 0 ? name : "test_" + name, value);
    } else if (entry.second.IsMap()) {
      MetricTable table;
      HPO_RETURN_IF_ERROR(ReadTable(path, name, entry.second, &table));
      tables->push_back(std::move(table));
    } else {
      return Status::BadInput(path + ": " + name +
                              ": must be a number (a test metric) or a table {rows, labels}");
    }
  }
  return Status::Ok();
}

}  // namespace hpo
