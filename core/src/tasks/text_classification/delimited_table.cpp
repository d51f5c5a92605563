#include "tasks/text_classification/delimited_table.hpp"

#include <algorithm>
#include <string_view>
#include <utility>

#include "common/file_io.hpp"
#include "common/utf8.hpp"

namespace hpo {
namespace {

bool IsBlankByte(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// How a field ended.
enum class FieldEnd {
  kDelimiter,       // more fields follow on this row
  kRowEnd,          // LF, CRLF or the end of the file
  kUnclosedQuote,   // a quoted field ran to the end of the file
  kTextAfterQuote,  // a closing quote followed by something other than a delimiter or row end
};

// Walks the bytes of a table one field at a time, counting lines. Holds a view of the bytes.
class FieldScanner {
 public:
  FieldScanner(std::string_view bytes, char delimiter) : bytes_(bytes), delimiter_(delimiter) {}

  int64_t line() const { return line_; }

  // True when only blank lines remain.
  bool RestIsBlank() const {
    return std::all_of(bytes_.begin() + at_, bytes_.end(),
                       [](char c) { return IsBlankByte(c) || c == '\n'; });
  }

  // True when the current line holds only spaces, tabs and CRs.
  bool LineIsBlank() const {
    for (size_t i = at_; i < bytes_.size() && bytes_[i] != '\n'; ++i) {
      if (!IsBlankByte(bytes_[i])) return false;
    }
    return true;
  }

  // Reads the field at the current position and what ends it, appending the field's value to
  // `value` unless it is null.
  FieldEnd Next(std::string* value) {
    if (at_ < bytes_.size() && bytes_[at_] == '"') return NextQuoted(value);
    const size_t start = at_;
    while (at_ < bytes_.size() && bytes_[at_] != delimiter_ && bytes_[at_] != '\n' &&
           !IsCrLf(at_)) {
      ++at_;
    }
    if (value != nullptr) value->append(bytes_.data() + start, at_ - start);
    return ConsumeFieldEnd();
  }

 private:
  bool IsCrLf(size_t at) const {
    return bytes_[at] == '\r' && at + 1 < bytes_.size() && bytes_[at + 1] == '\n';
  }

  FieldEnd NextQuoted(std::string* value) {
    ++at_;  // the opening quote
    for (;;) {
      const size_t quote = bytes_.find('"', at_);
      if (quote == std::string_view::npos) return FieldEnd::kUnclosedQuote;
      line_ += std::count(bytes_.begin() + at_, bytes_.begin() + quote, '\n');
      if (value != nullptr) value->append(bytes_.data() + at_, quote - at_);
      at_ = quote + 1;
      if (at_ == bytes_.size() || bytes_[at_] != '"') break;
      if (value != nullptr) value->push_back('"');
      ++at_;  // the second quote of a doubled pair
    }
    return ConsumeFieldEnd();
  }

  FieldEnd ConsumeFieldEnd() {
    if (at_ == bytes_.size()) return FieldEnd::kRowEnd;
    if (bytes_[at_] == delimiter_) {
      ++at_;
      return FieldEnd::kDelimiter;
    }
    if (bytes_[at_] == '\n' || IsCrLf(at_)) {
      at_ += bytes_[at_] == '\n' ? 1 : 2;
      ++line_;
      return FieldEnd::kRowEnd;
    }
    return FieldEnd::kTextAfterQuote;
  }

  std::string_view bytes_;
  char delimiter_;
  size_t at_ = 0;
  int64_t line_ = 1;
};

std::string Quoted(const std::string& name) { return "'" + name + "'"; }

std::string JoinQuoted(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ", ") + Quoted(name);
  return joined;
}

// "column 2 ('text')" for a field of a data row, "column 2 of the header" for the header's.
std::string DescribeColumn(int64_t field_index, const std::vector<std::string>* header) {
  std::string described = "column " + std::to_string(field_index + 1);
  if (header == nullptr) return described + " of the header";
  if (field_index < static_cast<int64_t>(header->size())) {
    described += " (" + Quoted((*header)[field_index]) + ")";
  }
  return described;
}

// The BadInput for a field that ended in kUnclosedQuote or kTextAfterQuote.
Status FieldError(FieldEnd end, const std::string& path, int64_t field_start_line,
                  int64_t line_after_field, const std::string& column) {
  if (end == FieldEnd::kUnclosedQuote) {
    return Status::BadInput(path + ":" + std::to_string(field_start_line) + ": " + column +
                            ": quoted field never closed");
  }
  return Status::BadInput(path + ":" + std::to_string(line_after_field) + ": " + column +
                          ": a closing quote must be followed by the delimiter or the line's end");
}

Status ReadHeader(FieldScanner* scanner, const std::string& path,
                  std::vector<std::string>* header) {
  for (FieldEnd end = FieldEnd::kDelimiter; end == FieldEnd::kDelimiter;) {
    const int64_t field_start_line = scanner->line();
    header->emplace_back();
    end = scanner->Next(&header->back());
    if (end == FieldEnd::kUnclosedQuote || end == FieldEnd::kTextAfterQuote) {
      const int64_t field_index = static_cast<int64_t>(header->size()) - 1;
      return FieldError(end, path, field_start_line, scanner->line(),
                        DescribeColumn(field_index, nullptr));
    }
  }
  return Status::Ok();
}

Status FindColumn(const std::vector<std::string>& header, const std::string& name,
                  const std::string& path, int64_t* index) {
  const auto found = std::find(header.begin(), header.end(), name);
  if (found == header.end()) {
    return Status::BadInput(path + ": no column " + Quoted(name) +
                            " in the header; the header's columns are " + JoinQuoted(header));
  }
  if (std::find(found + 1, header.end(), name) != header.end()) {
    return Status::BadInput(path + ": column " + Quoted(name) + " appears twice in the header");
  }
  *index = found - header.begin();
  return Status::Ok();
}

// Reads one data row; the scanner stands at its first byte.
Status ReadRow(FieldScanner* scanner, const std::string& path,
               const std::vector<std::string>& header, int64_t text_index, int64_t label_index,
               LabeledText* row) {
  row->line = scanner->line();
  int64_t num_fields = 0;
  for (FieldEnd end = FieldEnd::kDelimiter; end == FieldEnd::kDelimiter; ++num_fields) {
    std::string* value = num_fields == text_index    ? &row->text
                         : num_fields == label_index ? &row->label
                                                     : nullptr;
    const int64_t field_start_line = scanner->line();
    end = scanner->Next(value);
    if (end == FieldEnd::kUnclosedQuote || end == FieldEnd::kTextAfterQuote) {
      return FieldError(end, path, field_start_line, scanner->line(),
                        DescribeColumn(num_fields, &header));
    }
  }
  const std::string where = path + ":" + std::to_string(row->line) + ": ";
  if (num_fields != static_cast<int64_t>(header.size())) {
    return Status::BadInput(where + std::to_string(num_fields) +
                            (num_fields == 1 ? " field" : " fields") + ", the header has " +
                            std::to_string(header.size()));
  }
  if (row->label.empty()) {
    return Status::BadInput(where + DescribeColumn(label_index, &header) + ": empty label");
  }
  return Status::Ok();
}

}  // namespace

Status ReadLabeledTexts(const std::string& path, TableFormat format, const std::string& text_column,
                        const std::string& label_column, std::vector<LabeledText>* rows) {
  rows->clear();
  if (text_column == label_column) {
    return Status::BadInput(path + ": the text and label columns are both " + Quoted(text_column));
  }
  std::string bytes;
  HPO_RETURN_IF_ERROR(ReadWholeFile(path, "text table", &bytes));
  std::string_view content = bytes;
  if (content.substr(0, kUtf8ByteOrderMark.size()) == kUtf8ByteOrderMark) {
    content.remove_prefix(kUtf8ByteOrderMark.size());
  }
  FieldScanner scanner(content, format == TableFormat::kTsv ? '\t' : ',');
  if (scanner.RestIsBlank()) {
    return Status::BadInput(path + ": empty file; expected a header row naming the columns");
  }

  std::vector<std::string> header;
  HPO_RETURN_IF_ERROR(ReadHeader(&scanner, path, &header));
  int64_t text_index = 0;
  int64_t label_index = 0;
  HPO_RETURN_IF_ERROR(FindColumn(header, text_column, path, &text_index));
  HPO_RETURN_IF_ERROR(FindColumn(header, label_column, path, &label_index));

  while (!scanner.RestIsBlank()) {
    if (scanner.LineIsBlank()) {
      return Status::BadInput(path + ":" + std::to_string(scanner.line()) +
                              ": blank line; blank lines are allowed only at the end of the file");
    }
    LabeledText row;
    HPO_RETURN_IF_ERROR(ReadRow(&scanner, path, header, text_index, label_index, &row));
    rows->push_back(std::move(row));
  }
  return Status::Ok();
}

}  // namespace hpo
