#include "study_schema.hpp"

#include <cstring>

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
  for (const char* fixed : {kTrialIdField, kStatusField, kObjectiveField, kEpochsField,
                            kDurationField, kGroupField, kMessageField, kStartTimeField}) {
    if (name == fixed) return true;
  }
  return false;
}

std::string ParamColumnName(const std::string& param) {
  return IsFixedTrialsField(param) ? kCollidingParamPrefix + param : param;
}

std::string ParamNameOfColumn(const std::string& column) {
  const std::string prefix = kCollidingParamPrefix;
  if (column.rfind(prefix, 0) == 0 && IsFixedTrialsField(column.substr(prefix.size()))) {
    return column.substr(prefix.size());
  }
  return column;
}

RowSchema TrialsSchema(const StudyLayout& layout) {
  RowSchema schema = LegacyTrialsSchema(layout);
  schema.AddFloat64(kStartTimeField);
  return schema;
}

RowSchema LegacyTrialsSchema(const StudyLayout& layout) {
  RowSchema schema;
  schema.AddInt64(kTrialIdField);
  schema.AddString(kStatusField, kStatusWidth, /*ascii=*/true);
  schema.AddFloat64(kObjectiveField);
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
  for (const std::string& metric : layout.metric_names) schema.AddFloat64(metric);
  return schema;
}

}  // namespace hpo::study_internal
