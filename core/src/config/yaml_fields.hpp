// Private helpers of the config parser: YAML 1.2 core-schema scalar resolution (yaml-cpp keeps
// every scalar as text) and typed, line-aware reading of mapping fields. Every error is a
// BadInput Status formatted "FILE:LINE: KEY.PATH: what is wrong".
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "hpo/status.hpp"

namespace hpo::config_internal {

// What a YAML scalar resolves to under the YAML 1.2 core schema. Quoted scalars and scalars
// tagged !!str are always strings.
enum class ScalarKind { kInt, kFloat, kBool, kNull, kString };

// Resolves a scalar node by its syntax alone: an integer literal is kInt even when it does not
// fit int64 (ParseIntegerScalar then fails, and the caller reports it out of range).
ScalarKind ResolveScalar(const YAML::Node& node);

// Parses a plain integer (decimal, 0x hex, 0o octal; optional sign). False when `text` is not an
// integer or does not fit int64.
bool ParseIntegerScalar(const std::string& text, int64_t* value);
// Parses a plain YAML float or integer (".inf", ".nan" included). False when `text` is not one or
// overflows or underflows a double.
bool ParseNumberScalar(const std::string& text, double* value);

// 1-based line of a node parsed from text; 0 for nodes that were not.
int LineOf(const YAML::Node& node);

// A value as an error message names what it got: 'TEXT' for a scalar, else "nothing" (an empty
// value), "a list" or "a mapping".
std::string DescribeValue(const YAML::Node& node);

// One `key: value` pair of a mapping, with the key's dotted path and 1-based line.
struct Field {
  std::string key;
  std::string path;  // e.g. "sweep.parameters.lr.min"
  int line = 0;
  YAML::Node value;
};

// Formats errors for one config file.
class ErrorFormatter {
 public:
  explicit ErrorFormatter(std::string file) : file_(std::move(file)) {}

  // "FILE:LINE: PATH: WHAT" as a BadInput Status.
  Status At(int line, const std::string& path, const std::string& what) const;
  Status At(const Field& field, const std::string& what) const {
    return At(field.line, field.path, what);
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

// The fields of one mapping node in file order. Keeps a pointer to the ErrorFormatter given to
// Read, which must outlive it.
class MappingFields {
 public:
  // Reads owner.value into `fields`; BadInput for a non-mapping, a non-scalar key or a duplicate
  // key. `owner.path` empty means the document root.
  static Status Read(const ErrorFormatter& errors, const Field& owner, MappingFields* fields);

  const std::vector<Field>& fields() const { return fields_; }
  // nullptr when the mapping has no such key.
  const Field* Find(const std::string& key) const;
  bool Has(const std::string& key) const { return Find(key) != nullptr; }

  // "missing required key" error at the owner's line, naming owner.path + "." + key; `why`, when
  // given, is appended in parentheses.
  Status Missing(const std::string& key, const std::string& why = "") const;
  // The dotted path of `key` inside this mapping.
  std::string PathOf(const std::string& key) const;

  // Every key must be in `known` or `unsupported` (error "not supported yet"). The first other
  // key in file order is reported as unknown, with the `known` keys listed.
  Status CheckKeys(const std::vector<std::string>& known,
                   const std::vector<std::string>& unsupported = {}) const;

 private:
  const ErrorFormatter* errors_ = nullptr;
  Field owner_;
  std::vector<Field> fields_;
};

// Typed reads of a field's value. Each reports a wrong type or range at the field's line.
Status ReadString(const ErrorFormatter& errors, const Field& field, std::string* value);
Status ReadInteger(const ErrorFormatter& errors, const Field& field, int64_t minimum,
                   int64_t maximum, int64_t* value);
// A finite number (integers accepted). `is_integer` (optional) tells whether it was written as one.
Status ReadFiniteNumber(const ErrorFormatter& errors, const Field& field, double* value,
                        bool* is_integer = nullptr);

// Shortest text that reads back as `value` (for messages).
std::string FormatNumber(double value);

}  // namespace hpo::config_internal
