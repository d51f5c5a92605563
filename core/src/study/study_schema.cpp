#include "study_schema.hpp"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <variant>

namespace hpo::study_internal {

void RowSchema::Add(Field field) {
  field.offset = row_size_;
  row_size_ += field.size;
  fields_.push_back(std::move(field));
}

void RowSchema::AddInt64(const std::string& name) {
  Add(Field{name, FieldKind::kInt64, sizeof(int64_t), 0, false});
}

void RowSchema::AddFloat64(const std::string& name) {
  Add(Field{name, FieldKind::kFloat64, sizeof(double), 0, false});
}

void RowSchema::AddString(const std::string& name, size_t width, bool ascii) {
  Add(Field{name, FieldKind::kString, width, 0, ascii});
}

Status MakeStringType(size_t width, bool ascii, DatatypeHandle* type) {
  DatatypeHandle string_type(H5Tcopy(H5T_C_S1));
  if (!string_type.valid()) return Status::Failure(Hdf5Error("H5Tcopy"));
  if (H5Tset_size(string_type.get(), width) < 0 ||
      H5Tset_strpad(string_type.get(), H5T_STR_NULLTERM) < 0 ||
      H5Tset_cset(string_type.get(), ascii ? H5T_CSET_ASCII : H5T_CSET_UTF8) < 0) {
    return Status::Failure(Hdf5Error("H5Tset_size"));
  }
  *type = std::move(string_type);
  return Status::Ok();
}

Status RowSchema::MakeType(bool file, DatatypeHandle* type) const {
  DatatypeHandle compound(H5Tcreate(H5T_COMPOUND, row_size_));
  if (!compound.valid()) return Status::Failure(Hdf5Error("H5Tcreate"));
  for (const Field& field : fields_) {
    hid_t member_type = H5I_INVALID_HID;
    DatatypeHandle string_type;
    switch (field.kind) {
      case FieldKind::kInt64:
        member_type = file ? H5T_STD_I64LE : H5T_NATIVE_INT64;
        break;
      case FieldKind::kFloat64:
        member_type = file ? H5T_IEEE_F64LE : H5T_NATIVE_DOUBLE;
        break;
      case FieldKind::kString:
        HPO_RETURN_IF_ERROR(MakeStringType(field.size, field.ascii, &string_type));
        member_type = string_type.get();
        break;
    }
    if (H5Tinsert(compound.get(), field.name.c_str(), field.offset, member_type) < 0) {
      return Status::Failure(Hdf5Error("H5Tinsert") + " (field '" + field.name + "')");
    }
  }
  *type = std::move(compound);
  return Status::Ok();
}

std::string FitMessage(const std::string& message, size_t max_bytes) {
  static const std::string kMarker = "\n...";
  if (message.size() <= max_bytes) return message;
  const std::string reason = message.substr(0, message.find('\n'));
  // Room for at least a few bytes of the end; else the plain cut PutString makes.
  if (reason.size() == message.size() || reason.size() + kMarker.size() + 8 > max_bytes) {
    return message;
  }
  size_t start = message.size() - (max_bytes - reason.size() - kMarker.size());
  const size_t line_start = message.find('\n', start);
  if (line_start != std::string::npos && line_start + 1 < message.size()) {
    start = line_start;
  } else {
    while (start < message.size() && (static_cast<unsigned char>(message[start]) & 0xC0) == 0x80) {
      ++start;
    }
  }
  return reason + kMarker + message.substr(start);
}

void RowSchema::PutInt64(char* row, size_t index, int64_t value) const {
  std::memcpy(row + fields_[index].offset, &value, sizeof(value));
}

void RowSchema::PutFloat64(char* row, size_t index, double value) const {
  std::memcpy(row + fields_[index].offset, &value, sizeof(value));
}

void RowSchema::PutString(char* row, size_t index, const std::string& value) const {
  const Field& field = fields_[index];
  size_t length = value.size();
  if (length > field.size - 1) {
    length = field.size - 1;
    // Do not split a UTF-8 sequence: back up while the first dropped byte is a continuation byte.
    while (length > 0 && (static_cast<unsigned char>(value[length]) & 0xC0) == 0x80) --length;
  }
  std::memcpy(row + field.offset, value.data(), length);
  std::memset(row + field.offset + length, 0, field.size - length);
}

int64_t RowSchema::GetInt64(const char* row, size_t index) const {
  int64_t value = 0;
  std::memcpy(&value, row + fields_[index].offset, sizeof(value));
  return value;
}

double RowSchema::GetFloat64(const char* row, size_t index) const {
  double value = 0.0;
  std::memcpy(&value, row + fields_[index].offset, sizeof(value));
  return value;
}

std::string RowSchema::GetString(const char* row, size_t index) const {
  const Field& field = fields_[index];
  const char* begin = row + field.offset;
  size_t length = 0;
  while (length < field.size && begin[length] != '\0') ++length;
  return std::string(begin, length);
}

bool IsFixedTrialsField(const std::string& name) {
  if (name.rfind(kFurtherObjectivePrefix, 0) == 0) return true;
  for (const char* fixed :
       {kTrialIdField, kStatusField, kObjectiveField, kEpochsField, kDurationField, kGroupField,
        kMessageField, kStartTimeField, kParentTrialField, kParentEpochField}) {
    if (name == fixed) return true;
  }
  return false;
}

std::string ParamColumnName(const std::string& param) {
  return IsFixedTrialsField(param) ? kCollidingParamPrefix + param : param;
}

std::string MetricColumnName(const std::string& metric) {
  std::string column;
  for (const char c : metric) {
    if (c == '%') {
      column += "%25";
    } else if (c == '/') {
      column += "%2F";
    } else {
      column.push_back(c);
    }
  }
  return column;
}

std::string FurtherObjectiveColumnName(const std::string& metric) {
  return kFurtherObjectivePrefix + MetricColumnName(metric);
}

std::string MetricNameOfColumn(const std::string& column) {
  std::string metric;
  for (size_t i = 0; i < column.size(); ++i) {
    if (column.compare(i, 3, "%2F") == 0) {
      metric.push_back('/');
      i += 2;
    } else if (column.compare(i, 3, "%25") == 0) {
      metric.push_back('%');
      i += 2;
    } else {
      metric.push_back(column[i]);
    }
  }
  return metric;
}

std::string ParamNameOfColumn(const std::string& column) {
  const std::string prefix = kCollidingParamPrefix;
  if (column.rfind(prefix, 0) == 0 && IsFixedTrialsField(column.substr(prefix.size()))) {
    return column.substr(prefix.size());
  }
  return column;
}

void PutAbsentParam(const RowSchema& schema, ParamType type, size_t index, char* row) {
  switch (type) {
    case ParamType::kInt:
      schema.PutInt64(row, index, std::numeric_limits<int64_t>::min());
      return;
    case ParamType::kFloat:
      schema.PutFloat64(row, index, std::numeric_limits<double>::quiet_NaN());
      return;
    case ParamType::kString:
      schema.PutString(row, index, "");
      return;
  }
}

bool IsAbsentParam(const ParamValue& value) {
  if (const auto* integer = std::get_if<int64_t>(&value)) {
    return *integer == std::numeric_limits<int64_t>::min();
  }
  if (const auto* number = std::get_if<double>(&value)) return std::isnan(*number);
  return std::get<std::string>(value).empty();
}

RowSchema TrialsSchema(const StudyLayout& layout) {
  RowSchema schema = LegacyTrialsSchema(layout);
  schema.AddFloat64(kStartTimeField);
  if (layout.lineage) {
    schema.AddInt64(kParentTrialField);
    schema.AddInt64(kParentEpochField);
  }
  return schema;
}

RowSchema LegacyTrialsSchema(const StudyLayout& layout) {
  RowSchema schema;
  schema.AddInt64(kTrialIdField);
  schema.AddString(kStatusField, kStatusWidth, /*ascii=*/true);
  schema.AddFloat64(kObjectiveField);
  for (const StudyObjective& objective : layout.further_objectives) {
    schema.AddFloat64(FurtherObjectiveColumnName(objective.metric));
  }
  for (const StudyParamColumn& column : layout.params) {
    switch (column.type) {
      case ParamType::kInt:
        schema.AddInt64(ParamColumnName(column.name));
        break;
      case ParamType::kFloat:
        schema.AddFloat64(ParamColumnName(column.name));
        break;
      case ParamType::kString:
        schema.AddString(ParamColumnName(column.name), column.string_width, /*ascii=*/false);
        break;
    }
  }
  schema.AddInt64(kEpochsField);
  schema.AddFloat64(kDurationField);
  schema.AddInt64(kGroupField);
  schema.AddString(kMessageField, kMessageWidth, /*ascii=*/false);
  return schema;
}

RowSchema CurvesSchema(const StudyLayout& layout) {
  RowSchema schema;
  schema.AddInt64(kTrialIdField);
  schema.AddInt64(kEpochField);
  for (const std::string& metric : layout.metric_names) schema.AddFloat64(MetricColumnName(metric));
  return schema;
}

Status MakeCommitType(bool file, DatatypeHandle* type) {
  DatatypeHandle compound(H5Tcreate(H5T_COMPOUND, sizeof(CommitRecord)));
  if (!compound.valid()) return Status::Failure(Hdf5Error("H5Tcreate"));
  const hid_t signed_type = file ? H5T_STD_I64LE : H5T_NATIVE_INT64;
  const hid_t unsigned_type = file ? H5T_STD_U64LE : H5T_NATIVE_UINT64;
  const struct {
    const char* name;
    size_t offset;
    hid_t type;
  } members[] = {
      {"sequence", HOFFSET(CommitRecord, sequence), signed_type},
      {"trials", HOFFSET(CommitRecord, trials), signed_type},
      {"curves", HOFFSET(CommitRecord, curves), signed_type},
      {"state_offset", HOFFSET(CommitRecord, state_offset), signed_type},
      {"state_size", HOFFSET(CommitRecord, state_size), signed_type},
      {"state_checksum", HOFFSET(CommitRecord, state_checksum), unsigned_type},
      {"checksum", HOFFSET(CommitRecord, checksum), unsigned_type},
  };
  for (const auto& member : members) {
    if (H5Tinsert(compound.get(), member.name, member.offset, member.type) < 0) {
      return Status::Failure(Hdf5Error("H5Tinsert") + " (field '" + member.name + "')");
    }
  }
  *type = std::move(compound);
  return Status::Ok();
}

uint64_t Fnv1a64(const void* data, size_t size) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

uint64_t RecordChecksum(const CommitRecord& record) {
  return Fnv1a64(&record, offsetof(CommitRecord, checksum));
}

bool CanEncodeStateName(const std::string& name) {
  return !name.empty() && name.find_first_of("\t\n") == std::string::npos;
}

std::string EncodeStateAttributes(const std::map<std::string, StudyAttribute>& attributes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  for (const auto& [name, value] : attributes) {
    if (const auto* i = std::get_if<int64_t>(&value)) {
      text += "i\t" + name + "\t" + std::to_string(*i) + "\n";
    } else if (const auto* d = std::get_if<double>(&value)) {
      char buffer[64];
      std::snprintf(buffer, sizeof(buffer), "%a", *d);
      text += "f\t" + name + "\t" + buffer + "\n";
    } else {
      text += "s\t" + name + "\t";
      for (unsigned char byte : std::get<std::string>(value)) {
        text.push_back(kDigits[byte >> 4]);
        text.push_back(kDigits[byte & 15]);
      }
      text += "\n";
    }
  }
  return text;
}

bool DecodeStateAttributes(const std::string& text, std::map<std::string, StudyAttribute>* out) {
  const auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  size_t position = 0;
  while (position < text.size()) {
    const size_t end = text.find('\n', position);
    if (end == std::string::npos) return false;
    const std::string line = text.substr(position, end - position);
    position = end + 1;
    const size_t first = line.find('\t');
    const size_t second = first == std::string::npos ? first : line.find('\t', first + 1);
    if (first != 1 || second == std::string::npos || second == first + 1) return false;
    const std::string name = line.substr(first + 1, second - first - 1);
    const std::string value = line.substr(second + 1);
    char* parsed_end = nullptr;
    switch (line[0]) {
      case 'i': {
        const long long number = std::strtoll(value.c_str(), &parsed_end, 10);
        if (value.empty() || *parsed_end != '\0') return false;
        (*out)[name] = static_cast<int64_t>(number);
        break;
      }
      case 'f': {
        const double number = std::strtod(value.c_str(), &parsed_end);
        if (value.empty() || *parsed_end != '\0') return false;
        (*out)[name] = number;
        break;
      }
      case 's': {
        if (value.size() % 2 != 0) return false;
        std::string bytes;
        for (size_t i = 0; i < value.size(); i += 2) {
          const int high = digit(value[i]);
          const int low = digit(value[i + 1]);
          if (high < 0 || low < 0) return false;
          bytes.push_back(static_cast<char>(high * 16 + low));
        }
        (*out)[name] = std::move(bytes);
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

Status ReadPublished(hid_t file, bool* present, CommitRecord* record,
                     std::map<std::string, StudyAttribute>* state, bool* torn) {
  *present = false;
  *torn = false;
  if (H5Lexists(file, kPublishedDataset, H5P_DEFAULT) <= 0) return Status::Ok();
  *present = true;
  DatasetHandle published(H5Dopen2(file, kPublishedDataset, H5P_DEFAULT));
  DataspaceHandle space(published.valid() ? H5Dget_space(published.get()) : H5I_INVALID_HID);
  if (!space.valid() || H5Sget_simple_extent_npoints(space.get()) != 2) {
    return Status::BadInput("/published is not a table of two records");
  }
  DatatypeHandle memory_type;
  HPO_RETURN_IF_ERROR(MakeCommitType(/*file=*/false, &memory_type));
  CommitRecord records[2];
  if (H5Dread(published.get(), memory_type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, records) < 0) {
    return Status::BadInput("/published: " + Hdf5Error("H5Dread"));
  }
  const CommitRecord* latest = nullptr;
  for (const CommitRecord& candidate : records) {
    if (candidate.checksum != RecordChecksum(candidate) || candidate.trials < 0 ||
        candidate.curves < 0 || candidate.state_offset < 0 || candidate.state_size < 0) {
      continue;
    }
    if (latest == nullptr || candidate.sequence > latest->sequence) latest = &candidate;
  }
  if (latest == nullptr) {
    *torn = true;
    return Status::BadInput("/published has no valid record");
  }
  std::string text(static_cast<size_t>(latest->state_size), '\0');
  if (!text.empty()) {
    DatasetHandle slots(H5Dopen2(file, kStateDataset, H5P_DEFAULT));
    DataspaceHandle file_space(slots.valid() ? H5Dget_space(slots.get()) : H5I_INVALID_HID);
    const hsize_t start[1] = {static_cast<hsize_t>(latest->state_offset)};
    const hsize_t count[1] = {static_cast<hsize_t>(latest->state_size)};
    if (!file_space.valid() || static_cast<hsize_t>(H5Sget_simple_extent_npoints(
                                   file_space.get())) < start[0] + count[0]) {
      return Status::BadInput("/state is missing or smaller than /published says");
    }
    DataspaceHandle memory_space(H5Screate_simple(1, count, nullptr));
    if (H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
        H5Dread(slots.get(), H5T_NATIVE_UINT8, memory_space.get(), file_space.get(), H5P_DEFAULT,
                text.data()) < 0) {
      return Status::BadInput("/state: " + Hdf5Error("H5Dread"));
    }
  }
  if (Fnv1a64(text.data(), text.size()) != latest->state_checksum) {
    *torn = true;
    return Status::BadInput("/state does not match its checksum in /published");
  }
  state->clear();
  if (!DecodeStateAttributes(text, state)) return Status::BadInput("/state is damaged");
  *record = *latest;
  return Status::Ok();
}

}  // namespace hpo::study_internal
