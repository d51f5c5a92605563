// Reads the labelled examples of `task: text_classification` from a delimited text table (TSV or
// CSV). Torch-free; a pure function of the file it reads; thread-safe; every rank that loads data
// calls it, no collectives.
//
// The table's format, for both delimiters:
//  - The first row is a header naming the columns; the text and label columns are picked by name
//    and any other columns are read and ignored. Every row must have as many fields as the header.
//  - Quoting as in RFC 4180: a field that starts with '"' is quoted; inside it the delimiter, CR,
//    LF and doubled quotes ("" for ") stand for themselves, and after the closing quote comes the
//    delimiter or the end of the row. A '"' inside an unquoted field is an ordinary character.
//    This is what Python's csv module writes, with delimiter=',' or delimiter='\t'.
//  - Rows end with LF or CRLF; a UTF-8 byte order mark at the start is skipped; blank lines (only
//    spaces, tabs, CR) at the end of the file are ignored, anywhere else they are an error.
//  - Fields are taken byte for byte: no trimming, no change of encoding.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hpo/status.hpp"

namespace hpo {

// One example: the text and label fields of one row.
struct LabeledText {
  std::string text;
  std::string label;
  int64_t line = 0;  // 1-based line of the file on which the row starts
};

enum class TableFormat { kTsv, kCsv };

// Reads every row of the table at `path` into `rows` (replacing its contents), in file order.
// A table with a header and no rows is not an error here. Errors are BadInput and start with the
// path: a missing or unreadable file, an empty file, `text_column` or `label_column` not in the
// header ("... the header's columns are 'a', 'b'") or in it twice, the two naming the same column,
// "PATH:LINE: 3 fields, the header has 2", a blank line before the end, an unterminated quote
// ("PATH:LINE: column 2 ('text'): quoted field never closed", LINE where the field starts), a
// character other than the delimiter or a line end after a closing quote, an empty label.
Status ReadLabeledTexts(const std::string& path, TableFormat format, const std::string& text_column,
                        const std::string& label_column, std::vector<LabeledText>* rows);

}  // namespace hpo
