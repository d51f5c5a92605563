#include "tasks/torchscript/npy_file.hpp"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace hpo {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "NumericArray holds little-endian bytes: a big-endian host needs byte swapping");

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = sizeof(kMagic) - 1;

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// What the header dictionary says.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

Status Malformed(const std::string& why) { return Status::BadInput("malformed header: " + why); }

// Parses the header dictionary, a Python literal such as
// "{'descr': '<f4', 'fortran_order': False, 'shape': (60000, 28, 28), }" followed by the spaces and
// newline numpy pads it with. Accepts either quote, any whitespace between tokens and a trailing
// comma; nothing else. Messages leave out the file's path.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  Status Parse(NpyHeader* header) {
    bool have_descr = false;
    bool have_fortran_order = false;
    bool have_shape = false;
    SkipSpace();
    if (!Consume('{')) return Malformed("it does not start with '{'");
    SkipSpace();
    while (!Consume('}')) {
      std::string key;
      HPO_RETURN_IF_ERROR(ParseString("a key", &key));
      SkipSpace();
      if (!Consume(':')) return Malformed("no ':' after '" + key + "'");
      SkipSpace();
      if (key == "descr") {
        if (have_descr) return Malformed("'descr' appears twice");
        if (Peek() == '[') {
          return Status::BadInput(
              "structured dtypes (a list in 'descr') are not supported: save one numeric array "
              "per file");
        }
        HPO_RETURN_IF_ERROR(ParseString("the value of 'descr'", &header->descr));
        have_descr = true;
      } else if (key == "fortran_order") {
        if (have_fortran_order) return Malformed("'fortran_order' appears twice");
        HPO_RETURN_IF_ERROR(ParseBool(&header->fortran_order));
        have_fortran_order = true;
      } else if (key == "shape") {
        if (have_shape) return Malformed("'shape' appears twice");
        HPO_RETURN_IF_ERROR(ParseShape(&header->shape));
        have_shape = true;
      } else {
        return Malformed("unknown key '" + key + "'");
      }
      SkipSpace();
      const bool comma = Consume(',');
      SkipSpace();
      if (!comma && Peek() != '}') {
        return Malformed("no ',' or '}' after the value of '" + key + "'");
      }
    }
    SkipSpace();
    if (at_ != text_.size()) return Malformed("text after the closing '}'");
    if (!have_descr) return Malformed("no 'descr'");
    if (!have_fortran_order) return Malformed("no 'fortran_order'");
    if (!have_shape) return Malformed("no 'shape'");
    return Status::Ok();
  }

 private:
  char Peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }

  bool Consume(char expected) {
    if (Peek() != expected) return false;
    ++at_;
    return true;
  }

  void SkipSpace() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r')) {
      ++at_;
    }
  }

  // A quoted string without escapes (numpy's keys and descr strings have none).
  Status ParseString(const char* what, std::string* value) {
    const char quote = Peek();
    if (quote != '\'' && quote != '"') return Malformed(std::string(what) + " is not a string");
    const size_t end = text_.find(quote, at_ + 1);
    if (end == std::string_view::npos) return Malformed("a string does not end");
    const std::string_view body = text_.substr(at_ + 1, end - at_ - 1);
    if (body.find_first_of("\\\n") != std::string_view::npos) {
      return Malformed("a string holds a backslash or a line break");
    }
    *value = std::string(body);
    at_ = end + 1;
    return Status::Ok();
  }

  Status ParseBool(bool* value) {
    for (const auto& [word, meaning] : {std::pair<std::string_view, bool>{"True", true},
                                        std::pair<std::string_view, bool>{"False", false}}) {
      if (text_.substr(at_, word.size()) == word) {
        at_ += word.size();
        *value = meaning;
        return Status::Ok();
      }
    }
    return Malformed("the value of 'fortran_order' is neither True nor False");
  }

  // A non-negative decimal integer, with the "L" suffix Python 2 wrote for longs allowed.
  Status ParseDimension(int64_t* dimension) {
    if (Peek() == '-') return Malformed("a negative dimension in 'shape'");
    if (Peek() < '0' || Peek() > '9') return Malformed("'shape' holds something not an integer");
    int64_t value = 0;
    while (Peek() >= '0' && Peek() <= '9') {
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, Peek() - '0', &value)) {
        return Malformed("a dimension in 'shape' is too large");
      }
      ++at_;
    }
    Consume('L');
    *dimension = value;
    return Status::Ok();
  }

  // A tuple of dimensions: "()", "(5,)", "(3, 4)", "(3, 4,)".
  Status ParseShape(std::vector<int64_t>* shape) {
    if (!Consume('(')) return Malformed("the value of 'shape' is not a tuple");
    shape->clear();
    bool comma_after_last = false;
    for (;;) {
      SkipSpace();
      if (Consume(')')) break;
      if (!shape->empty() && !comma_after_last) return Malformed("no ',' or ')' in 'shape'");
      int64_t dimension = 0;
      HPO_RETURN_IF_ERROR(ParseDimension(&dimension));
      shape->push_back(dimension);
      SkipSpace();
      comma_after_last = Consume(',');
    }
    if (shape->size() == 1 && !comma_after_last) {
      return Malformed("the value of 'shape' is a number in parentheses, not a tuple");
    }
    return Status::Ok();
  }

  std::string_view text_;
  size_t at_ = 0;
};

// One dtype the reader accepts: numpy's kind character and item size, and the type it is delivered
// as (uint16 and uint32 are widened to int32 and int64).
struct DescrType {
  char kind;
  size_t stored_size;
  ElementType type;
};

constexpr DescrType kDescrTypes[] = {
    {'f', 4, ElementType::kFloat32}, {'f', 8, ElementType::kFloat64}, {'i', 1, ElementType::kInt8},
    {'i', 2, ElementType::kInt16},   {'i', 4, ElementType::kInt32},   {'i', 8, ElementType::kInt64},
    {'u', 1, ElementType::kUInt8},   {'u', 2, ElementType::kInt32},   {'u', 4, ElementType::kInt64},
    {'b', 1, ElementType::kBool},
};

// Maps a descr such as "<f4" to the type the array is delivered as and the size of one element in
// the file (larger than ElementSize(*type) for widened unsigned types: "<u2" -> kInt32, 2).
Status ParseDescr(const std::string& descr, ElementType* type, size_t* stored_size) {
  const std::string quoted = "'" + descr + "'";
  const Status unsupported = Status::BadInput(
      "dtype " + quoted +
      " is not supported (supported: float32, float64, int8, uint8, int16, int32, int64, bool; "
      "uint16 and uint32 are widened to int32 and int64)");
  if (descr.size() < 2 || std::string_view("<>|=").find(descr[0]) == std::string_view::npos) {
    return unsupported;
  }
  switch (descr[1]) {
    case 'c':
      return Status::BadInput("complex numbers (" + quoted +
                              ") are not supported: store the real and imaginary parts as floats");
    case 'O':
      return Status::BadInput("Python objects (" + quoted +
                              ") cannot be read: save a numeric array, e.g. x.astype(np.float32)");
    case 'U':
    case 'S':
    case 'a':
      return Status::BadInput("strings (" + quoted + ") are not numbers: encode them as integers");
    case 'M':
    case 'm':
      return Status::BadInput("dates and time spans (" + quoted +
                              ") are not supported: convert them to numbers");
    case 'V':
      return Status::BadInput("raw or structured records (" + quoted +
                              ") are not supported: save one numeric array per file");
  }
  const std::string_view digits = std::string_view(descr).substr(2);
  if (digits.empty() || digits.size() > 2 ||
      digits.find_first_not_of("0123456789") != std::string_view::npos) {
    return unsupported;
  }
  const size_t size = std::stoul(std::string(digits));
  if (size > 1 && descr[0] == '>') {
    return Status::BadInput("big-endian data (" + quoted +
                            "): save it little-endian, e.g. x.astype('<" + descr.substr(1) + "')");
  }
  if (size > 1 && descr[0] == '|') return unsupported;
  const char kind = descr[1];
  if (kind == 'f' && size == 2) {
    return Status::BadInput("float16 (" + quoted + ") is not supported: save x.astype(np.float32)");
  }
  if (kind == 'u' && size == 8) {
    return Status::BadInput("uint64 (" + quoted +
                            ") is not supported: save x.astype(np.int64) if every value is below "
                            "2**63");
  }
  for (const DescrType& known : kDescrTypes) {
    if (known.kind == kind && known.stored_size == size) {
      *type = known.type;
      *stored_size = size;
      return Status::Ok();
    }
  }
  return unsupported;
}

template <typename Stored, typename Widened>
ArrayBytes Widen(const ArrayBytes& stored) {
  const size_t count = stored.size() / sizeof(Stored);
  ArrayBytes widened(count * sizeof(Widened));
  for (size_t i = 0; i < count; ++i) {
    Stored value;
    std::memcpy(&value, stored.data() + i * sizeof(Stored), sizeof(Stored));
    const Widened wide = value;
    std::memcpy(widened.data() + i * sizeof(Widened), &wide, sizeof(Widened));
  }
  return widened;
}

Status ReadExactly(std::FILE* file, void* out, size_t size, const char* what) {
  if (size == 0 || std::fread(out, 1, size, file) == size) return Status::Ok();
  return Status::BadInput(std::string("cannot read ") + what + ": " +
                          (std::ferror(file) ? std::strerror(errno) : "the file ended early"));
}

// ReadNpyFile on an open file of `file_size` bytes; messages leave out the path.
Status ReadNpy(std::FILE* file, uintmax_t file_size, NumericArray* array) {
  std::array<unsigned char, 12> preamble{};
  const size_t got = std::fread(preamble.data(), 1, 10, file);
  if (got < kMagicSize || std::memcmp(preamble.data(), kMagic, kMagicSize) != 0) {
    return Status::BadInput("not a .npy file: it does not start with \"\\x93NUMPY\"");
  }
  if (got < 10) {
    return Status::BadInput("truncated header: the file has " + std::to_string(file_size) +
                            " bytes");
  }
  const int major = preamble[6];
  const int minor = preamble[7];
  if (major < 1 || major > 3 || minor != 0) {
    return Status::BadInput("unsupported .npy format version " + std::to_string(major) + "." +
                            std::to_string(minor) + " (1.0, 2.0 and 3.0 are supported)");
  }
  size_t preamble_size = 10;
  size_t header_size = preamble[8] | (size_t{preamble[9]} << 8);
  if (major >= 2) {
    preamble_size = 12;
    if (std::fread(preamble.data() + 10, 1, 2, file) != 2) {
      return Status::BadInput("truncated header: the file has " + std::to_string(file_size) +
                              " bytes");
    }
    header_size |= (size_t{preamble[10]} << 16) | (size_t{preamble[11]} << 24);
  }
  const uintmax_t data_start = preamble_size + header_size;
  if (data_start > file_size) {
    return Status::BadInput("truncated header: it should end at byte " +
                            std::to_string(data_start) + " but the file has " +
                            std::to_string(file_size) + " bytes");
  }
  std::string header_text(header_size, '\0');
  HPO_RETURN_IF_ERROR(ReadExactly(file, header_text.data(), header_size, "the header"));
  NpyHeader header;
  HPO_RETURN_IF_ERROR(HeaderParser(header_text).Parse(&header));

  ElementType type = ElementType::kFloat32;
  size_t stored_size = 0;
  HPO_RETURN_IF_ERROR(ParseDescr(header.descr, &type, &stored_size));
  if (header.fortran_order) {
    return Status::BadInput(
        "the array is in Fortran order (fortran_order: True): save it in C order "
        "with np.save(path, np.ascontiguousarray(x))");
  }
  if (header.shape.empty()) {
    return Status::BadInput(
        "a 0-d array (shape (), a single value): data arrays need at least one "
        "dimension, the samples");
  }
  int64_t data_size = static_cast<int64_t>(stored_size);
  for (int64_t dimension : header.shape) {
    if (__builtin_mul_overflow(data_size, dimension, &data_size)) {
      return Status::BadInput("shape " + ShapeString(header.shape) + " is too large");
    }
  }
  const uintmax_t data_in_file = file_size - data_start;
  if (data_in_file != static_cast<uintmax_t>(data_size)) {
    return Status::BadInput(
        std::string(data_in_file < static_cast<uintmax_t>(data_size) ? "truncated data"
                                                                     : "trailing data") +
        ": shape " + ShapeString(header.shape) + " of '" + header.descr + "' needs " +
        std::to_string(data_size) + " bytes after the header, the file has " +
        std::to_string(data_in_file));
  }

  NumericArray result;
  result.type = type;
  result.shape = std::move(header.shape);
  result.bytes.resize(static_cast<size_t>(data_size));
  HPO_RETURN_IF_ERROR(ReadExactly(file, result.bytes.data(), result.bytes.size(), "the data"));
  if (stored_size == 2 && type == ElementType::kInt32) {
    result.bytes = Widen<uint16_t, int32_t>(result.bytes);
  } else if (stored_size == 4 && type == ElementType::kInt64) {
    result.bytes = Widen<uint32_t, int64_t>(result.bytes);
  }
  *array = std::move(result);
  return Status::Ok();
}

}  // namespace

Status ReadNpyFile(const std::string& path, NumericArray* array) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status)) return Status::BadInput(path + ": no such file");
  if (std::filesystem::is_directory(status)) {
    return Status::BadInput(path + ": is a folder, not a .npy file");
  }
  const uintmax_t file_size = std::filesystem::file_size(path, error);
  if (error) return Status::BadInput(path + ": cannot read: " + error.message());
  File file(std::fopen(path.c_str(), "rb"));
  if (file == nullptr) return Status::BadInput(path + ": cannot open: " + std::strerror(errno));
  return ReadNpy(file.get(), file_size, array).WithContext(path);
}

}  // namespace hpo
