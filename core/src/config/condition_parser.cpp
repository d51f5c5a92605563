// ParseConditions: the `conditions:` key beside `sweep:`.
#include "condition_parser.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "parameter_parser.hpp"

namespace hpo::config_internal {

namespace {

ParameterSpec* FindSpec(std::vector<ParameterSpec>* parameters, const std::string& name) {
  for (ParameterSpec& parameter : *parameters) {
    if (parameter.name == name) return &parameter;
  }
  return nullptr;
}

std::string KnownNames(const std::vector<ParameterSpec>& parameters) {
  std::string names;
  for (const ParameterSpec& parameter : parameters) {
    names += (names.empty() ? "" : ", ") + parameter.name;
  }
  return names;
}

// The parent's value `field` stands for, matched by type (numbers by value, booleans by truth,
// strings by text); nullptr when the parent has no such value.
const ParamValue* MatchParentValue(const ErrorFormatter& errors, const ParameterSpec& parent,
                                   const Field& field) {
  if (!field.value.IsScalar()) return nullptr;
  const std::string& text = field.value.Scalar();
  const ScalarKind kind = ResolveScalar(field.value);
  for (const ParamValue& value : parent.values) {
    if (parent.boolean) {
      const bool truth = !text.empty() && (text[0] == 't' || text[0] == 'T');
      if (kind == ScalarKind::kBool && std::get<std::string>(value) == (truth ? "true" : "false")) {
        return &value;
      }
    } else if (const auto* text_value = std::get_if<std::string>(&value)) {
      if (*text_value == text) return &value;
    } else if (kind == ScalarKind::kInt || kind == ScalarKind::kFloat) {
      double number = 0.0;
      if (ReadFiniteNumber(errors, field, &number).ok() && ParamAsDouble(value) == number) {
        return &value;
      }
    }
  }
  return nullptr;
}

Status ParseCondition(const ErrorFormatter& errors, const Field& entry,
                      std::vector<ParameterSpec>* parameters) {
  ParameterSpec* child = FindSpec(parameters, entry.key);
  if (child == nullptr) {
    return errors.At(
        entry, "not a parameter of sweep.parameters (it has: " + KnownNames(*parameters) + ")");
  }
  if (!entry.value.IsMap() || entry.value.size() != 1) {
    return errors.At(entry,
                     "must map one parent parameter to the values it exists for, such as "
                     "{optimizer: [sgd]}");
  }
  MappingFields fields;
  HPO_RETURN_IF_ERROR(MappingFields::Read(errors, entry, &fields));
  const Field& parent_field = fields.fields().front();
  const ParameterSpec* parent = FindSpec(parameters, parent_field.key);
  if (parent == nullptr) {
    return errors.At(parent_field, "the parent '" + parent_field.key +
                                       "' is not a parameter of sweep.parameters (it has: " +
                                       KnownNames(*parameters) + ")");
  }
  if (parent == child) {
    return errors.At(parent_field, "a parameter cannot be conditioned on itself (a cycle)");
  }
  if (parent->distribution != Distribution::kCategorical &&
      parent->distribution != Distribution::kCategoricalWithProbabilities) {
    return errors.At(parent_field, "the parent '" + parent->name +
                                       "' must be categorical (`values`), it is " +
                                       DistributionName(parent->distribution));
  }
  std::vector<Field> items;
  if (parent_field.value.IsScalar()) {
    items.push_back(parent_field);
  } else {
    HPO_RETURN_IF_ERROR(ReadValueList(errors, parent_field, &items));
  }
  ParameterCondition condition;
  condition.parent = parent->name;
  condition.line = entry.line;
  for (const Field& item : items) {
    const ParamValue* value = MatchParentValue(errors, *parent, item);
    if (value == nullptr) {
      std::string accepted;
      for (const ParamValue& candidate : parent->values) {
        accepted += (accepted.empty() ? "" : ", ") + FormatParamValueExact(candidate);
      }
      return errors.At(item, DescribeValue(item.value) + " is not a value of '" + parent->name +
                                 "' (it takes: " + accepted + ")");
    }
    if (std::find(condition.values.begin(), condition.values.end(), *value) ==
        condition.values.end()) {
      condition.values.push_back(*value);
    }
  }
  child->condition = std::move(condition);
  return Status::Ok();
}

// BadInput at `entry` when following parents from its parameter comes back to it.
Status CheckNoCycle(const ErrorFormatter& errors, const Field& entry,
                    std::vector<ParameterSpec>* parameters) {
  std::string chain = entry.key;
  const ParameterSpec* current = FindSpec(parameters, entry.key);
  for (size_t step = 0; step <= parameters->size() && current->condition; ++step) {
    chain += " -> " + current->condition->parent;
    if (current->condition->parent == entry.key) {
      return errors.At(entry, "the conditions form a cycle: " + chain);
    }
    current = FindSpec(parameters, current->condition->parent);
  }
  return Status::Ok();
}

}  // namespace

Status ParseConditions(const ErrorFormatter& errors, const Field& field,
                       std::vector<ParameterSpec>* parameters) {
  MappingFields fields;
  HPO_RETURN_IF_ERROR(MappingFields::Read(errors, field, &fields));
  for (const Field& entry : fields.fields()) {
    HPO_RETURN_IF_ERROR(ParseCondition(errors, entry, parameters));
  }
  for (const Field& entry : fields.fields()) {
    HPO_RETURN_IF_ERROR(CheckNoCycle(errors, entry, parameters));
  }
  return Status::Ok();
}

}  // namespace hpo::config_internal
