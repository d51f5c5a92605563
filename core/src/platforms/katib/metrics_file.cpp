#include "metrics_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <system_error>
#include <utility>

#include "common/utf8.hpp"
#include "program/user_regex.hpp"

namespace hpo {

const char kKatibDefaultFilter[] = R"(([\w|-]+)\s*=\s*([+-]?\d*(\.\d+)?([Ee][+-]?\d+)?))";

namespace {

constexpr size_t kKatibMaxRegexLineBytes = 4096;    // longer lines are not searched (stack)
constexpr size_t kKatibMaxLineBytes = 1 << 20;      // a longer line is a Failure
constexpr size_t kKatibReadChunkBytes = 1 << 16;    // bytes read per read() call
constexpr int kKatibMaxJsonDepth = 64;              // deeper nesting is not a metrics line
constexpr char kKatibTimestampKey[] = "timestamp";  // Katib's TimeStampJsonKey

bool KatibIsDigit(char c) { return c >= '0' && c <= '9'; }
bool KatibIsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

char KatibLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool KatibEqualsNoCase(std::string_view text, std::string_view lower_word) {
  if (text.size() != lower_word.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (KatibLower(text[i]) != lower_word[i]) return false;
  }
  return true;
}

std::string_view KatibTrim(std::string_view text) {
  while (!text.empty() && KatibIsBlank(text.front())) text.remove_prefix(1);
  while (!text.empty() && KatibIsBlank(text.back())) text.remove_suffix(1);
  return text;
}

size_t KatibSkipDigits(std::string_view text, size_t at) {
  while (at < text.size() && KatibIsDigit(text[at])) ++at;
  return at;
}

// Whether `text` is a number in JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
bool KatibIsJsonNumber(std::string_view text) {
  size_t at = 0;
  if (at < text.size() && text[at] == '-') ++at;
  if (at < text.size() && text[at] == '0') {
    ++at;
  } else if (at < text.size() && KatibIsDigit(text[at])) {
    at = KatibSkipDigits(text, at);
  } else {
    return false;
  }
  if (at < text.size() && text[at] == '.') {
    const size_t fraction = at + 1;
    at = KatibSkipDigits(text, fraction);
    if (at == fraction) return false;
  }
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    ++at;
    if (at < text.size() && (text[at] == '+' || text[at] == '-')) ++at;
    const size_t exponent = at;
    at = KatibSkipDigits(text, at);
    if (at == exponent) return false;
  }
  return at == text.size();
}

// `text` (blanks around it allowed) as a number, the way Go's strconv.ParseFloat reads Katib's
// values: a sign, digits with a fraction (or a fraction alone), an exponent; nan, inf, infinity
// in any case. `token` is the number as MetricReader reads it in a JSON line and in a pair: the
// text itself when it is in JSON's grammar, else the shortest text that reads back as the same
// double (".5" -> 0.5), or NaN, Infinity, -Infinity.
bool KatibReadNumber(std::string_view text, std::string* token) {
  text = KatibTrim(text);
  std::string_view body = text;
  const bool negative = !body.empty() && body.front() == '-';
  if (!body.empty() && (body.front() == '+' || body.front() == '-')) body.remove_prefix(1);
  if (KatibEqualsNoCase(body, "nan")) {
    *token = "NaN";
    return true;
  }
  if (KatibEqualsNoCase(body, "inf") || KatibEqualsNoCase(body, "infinity")) {
    *token = negative ? "-Infinity" : "Infinity";
    return true;
  }
  if (body.empty() || !(KatibIsDigit(body.front()) || body.front() == '.')) return false;
  double value = 0.0;
  const char* begin = negative ? body.data() - 1 : body.data();  // from_chars takes no '+'
  const char* end = body.data() + body.size();
  const auto [stop, error] = std::from_chars(begin, end, value, std::chars_format::general);
  if (error != std::errc() || stop != end) return false;
  if (KatibIsJsonNumber(text)) {
    *token = std::string(text);
    return true;
  }
  char buffer[64];
  const auto printed = std::to_chars(buffer, buffer + sizeof(buffer), value);
  *token = std::string(buffer, printed.ptr);
  if (!KatibIsJsonNumber(*token)) *token = std::string(text);  // not reached for finite doubles
  return true;
}

// Whether `name` is one MetricReader takes from a name=value pair.
bool KatibIsPairName(std::string_view name) {
  if (name.empty()) return false;
  const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!letter(name.front()) && name.front() != '_') return false;
  for (const char c : name) {
    const bool ok = letter(c) || KatibIsDigit(c) || c == '_' || c == '.' || c == '|' || c == '/' ||
                    c == '@' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// `text` as a JSON string literal.
std::string KatibJsonQuote(std::string_view text) {
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof(escape), "\\u%04x", static_cast<unsigned>(c));
      quoted += escape;
    } else {
      quoted += c;
    }
  }
  return quoted + "\"";
}

// ---- Go (RE2) regexes as ECMAScript ----------------------------------------------------------

// Whether `re` at `at` ('{') starts a repetition {n}, {n,} or {n,m}; `end` is past its '}'.
bool KatibIsRepetition(const std::string& re, size_t at, size_t* end) {
  size_t i = KatibSkipDigits(re, at + 1);
  if (i == at + 1) return false;
  if (i < re.size() && re[i] == ',') i = KatibSkipDigits(re, i + 1);
  if (i >= re.size() || re[i] != '}') return false;
  *end = i + 1;
  return true;
}

bool KatibIsSyntaxChar(char c) { return c != 0 && std::strchr("^$\\.*+?()[]{}|/", c) != nullptr; }

// An escape outside a bracket expression, at `*at` ('\\'); advances `*at` past it.
bool KatibConvertEscape(const std::string& re, size_t* at, std::string* out, std::string* why) {
  if (*at + 1 >= re.size()) {
    *why = "it ends with a lone backslash";
    return false;
  }
  const char next = re[*at + 1];
  if (next == 'A' || next == 'z') {
    *out += next == 'A' ? "^" : "$";
    *at += 2;
    return true;
  }
  if (next == 'Q') {
    const size_t quote_end = re.find("\\E", *at + 2);
    const size_t stop = quote_end == std::string::npos ? re.size() : quote_end;
    for (size_t i = *at + 2; i < stop; ++i) {
      if (KatibIsSyntaxChar(re[i])) *out += '\\';
      *out += re[i];
    }
    *at = quote_end == std::string::npos ? re.size() : quote_end + 2;
    return true;
  }
  if (next == 'p' || next == 'P' || next == 'C' ||
      (next == 'x' && *at + 2 < re.size() && re[*at + 2] == '{')) {
    *why = std::string("\\") + next + " has no ECMAScript equivalent in std::regex";
    return false;
  }
  out->append(re, *at, 2);
  *at += 2;
  return true;
}

// A bracket expression at `*at` ('['), copied up to its ']'; advances `*at` past it.
bool KatibCopyBracket(const std::string& re, size_t* at, std::string* out, std::string* why) {
  size_t i = *at + 1;
  *out += '[';
  if (i < re.size() && re[i] == '^') *out += re[i++];
  if (i < re.size() && re[i] == ']') {  // a literal in RE2, an empty class in ECMAScript
    *out += "\\]";
    ++i;
  }
  while (i < re.size()) {
    const char c = re[i];
    if (c == ']') {
      *out += ']';
      *at = i + 1;
      return true;
    }
    if (c == '\\') {
      if (i + 1 < re.size() && (re[i + 1] == 'p' || re[i + 1] == 'P')) {
        *why = std::string("\\") + re[i + 1] + " has no ECMAScript equivalent in std::regex";
        return false;
      }
      out->append(re, i, 2);
      i += 2;
      continue;
    }
    if (c == '[' && i + 1 < re.size() && re[i + 1] == ':') {  // [:alpha:]
      const size_t close = re.find(":]", i + 2);
      if (close != std::string::npos) {
        out->append(re, i, close + 2 - i);
        i = close + 2;
        continue;
      }
    }
    *out += c;
    ++i;
  }
  *why = "a '[' has no closing ']'";
  return false;
}

// A group's start at `*at` ('('); advances `*at` past what it copied.
bool KatibConvertGroupStart(const std::string& re, size_t* at, std::string* out, std::string* why) {
  if (re.compare(*at, 2, "(?") != 0 || re.compare(*at, 3, "(?:") == 0) {
    const size_t length = re.compare(*at, 3, "(?:") == 0 ? 3 : 1;
    out->append(re, *at, length);
    *at += length;
    return true;
  }
  const bool named = re.compare(*at, 4, "(?P<") == 0 ||
                     (re.compare(*at, 3, "(?<") == 0 && re.compare(*at, 4, "(?<=") != 0 &&
                      re.compare(*at, 4, "(?<!") != 0);
  if (named) {
    const size_t close = re.find('>', *at);
    if (close == std::string::npos) {
      *why = "a named group's name has no closing '>'";
      return false;
    }
    *out += '(';
    *at = close + 1;
    return true;
  }
  const size_t close = re.find_first_of(":)", *at + 2);
  *why = "'" + re.substr(*at, close == std::string::npos ? 3 : close + 1 - *at) +
         "' (inline flags or a look-around) has no equivalent in a filter here";
  return false;
}

// ---- JSON lines --------------------------------------------------------------------------------

// A top-level member of a JSON object line.
struct KatibJsonMember {
  enum class Kind { kNumber, kString, kOther };
  std::string raw_key;  // as written, quotes and escapes included
  std::string key;      // decoded
  Kind kind = Kind::kOther;
  std::string raw_value;     // as written
  std::string string_value;  // decoded, for a string
};

// A strict JSON (RFC 8259) reader of one object, plus Python json.dumps's NaN, Infinity and
// -Infinity, that keeps the top-level members. Objects and arrays nested deeper than
// kKatibMaxJsonDepth make the text invalid (no stack overflow).
class KatibJsonObjectLine {
 public:
  explicit KatibJsonObjectLine(std::string_view text) : text_(text) {}

  // False, with `why` set, when the text is not one JSON object.
  bool Parse(std::vector<KatibJsonMember>* members, std::string* why) {
    SkipSpace();
    if (!Peek('{')) return Fail("it does not start with '{'", why);
    ++at_;
    SkipSpace();
    if (!Consume('}')) {
      while (true) {
        if (!ParseMember(members)) return Fail("it is not valid JSON", why);
        SkipSpace();
        if (Consume('}')) break;
        if (!Consume(',')) return Fail("it is not valid JSON", why);
      }
    }
    SkipSpace();
    if (at_ != text_.size()) return Fail("text follows the object's '}'", why);
    return true;
  }

 private:
  bool Fail(const std::string& what, std::string* why) const {
    *why = "not a JSON object: " + what + " (column " + std::to_string(at_ + 1) + ")";
    return false;
  }
  bool Peek(char c) const { return at_ < text_.size() && text_[at_] == c; }
  bool Consume(char c) {
    if (!Peek(c)) return false;
    ++at_;
    return true;
  }
  bool ConsumeWord(std::string_view word) {
    if (text_.compare(at_, word.size(), word) != 0) return false;
    at_ += word.size();
    return true;
  }
  void SkipSpace() {
    while (at_ < text_.size() && KatibIsBlank(text_[at_])) ++at_;
  }

  bool ParseMember(std::vector<KatibJsonMember>* members) {
    KatibJsonMember member;
    SkipSpace();
    const size_t key_start = at_;
    if (!ParseString(&member.key)) return false;
    member.raw_key = std::string(text_.substr(key_start, at_ - key_start));
    SkipSpace();
    if (!Consume(':')) return false;
    SkipSpace();
    const size_t value_start = at_;
    if (Peek('"')) {
      if (!ParseString(&member.string_value)) return false;
      member.kind = KatibJsonMember::Kind::kString;
    } else if (at_ < text_.size() && (text_[at_] == '-' || KatibIsDigit(text_[at_]) ||
                                      text_[at_] == 'N' || text_[at_] == 'I')) {
      if (!ParseNumber()) return false;
      member.kind = KatibJsonMember::Kind::kNumber;
    } else if (!ParseValue(1)) {
      return false;
    }
    member.raw_value = std::string(text_.substr(value_start, at_ - value_start));
    members->push_back(std::move(member));
    return true;
  }

  // A value inside a container at `depth`.
  bool ParseValue(int depth) {
    if (at_ == text_.size()) return false;
    switch (text_[at_]) {
      case '{':
        return ParseContainer(depth + 1, '}', /*object=*/true);
      case '[':
        return ParseContainer(depth + 1, ']', /*object=*/false);
      case '"':
        return ParseString(nullptr);
      case 't':
        return ConsumeWord("true");
      case 'f':
        return ConsumeWord("false");
      case 'n':
        return ConsumeWord("null");
      default:
        return ParseNumber();
    }
  }

  // An object or array at its opening bracket.
  bool ParseContainer(int depth, char close, bool object) {
    if (depth > kKatibMaxJsonDepth) return false;
    ++at_;
    SkipSpace();
    if (Consume(close)) return true;
    while (true) {
      SkipSpace();
      if (object) {
        if (!ParseString(nullptr)) return false;
        SkipSpace();
        if (!Consume(':')) return false;
        SkipSpace();
      }
      if (!ParseValue(depth)) return false;
      SkipSpace();
      if (Consume(close)) return true;
      if (!Consume(',')) return false;
    }
  }

  bool ParseNumber() {
    if (ConsumeWord("NaN") || ConsumeWord("Infinity") || ConsumeWord("-Infinity")) return true;
    size_t end = at_;
    while (end < text_.size() && text_[end] != 0 &&
           (KatibIsDigit(text_[end]) || std::strchr("+-.eE", text_[end]) != nullptr)) {
      ++end;
    }
    if (!KatibIsJsonNumber(text_.substr(at_, end - at_))) return false;
    at_ = end;
    return true;
  }

  // At '"'; appends the decoded string to `out` when it is not null.
  bool ParseString(std::string* out) {
    if (!Consume('"')) return false;
    while (at_ < text_.size()) {
      const char c = text_[at_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        if (out != nullptr) out->push_back(c);
        continue;
      }
      if (at_ == text_.size() || !ParseEscape(out)) return false;
    }
    return false;
  }

  // After a backslash.
  bool ParseEscape(std::string* out) {
    const char escaped = text_[at_++];
    const char* const kPlain = "\"\\/bfnrt";
    const char* const kMeaning = "\"\\/\b\f\n\r\t";
    if (const char* found = std::strchr(kPlain, escaped); found != nullptr && escaped != 0) {
      if (out != nullptr) out->push_back(kMeaning[found - kPlain]);
      return true;
    }
    if (escaped != 'u') return false;
    uint32_t code = 0;
    if (!ParseHex4(&code)) return false;
    if (code >= 0xD800 && code < 0xDC00 && text_.compare(at_, 2, "\\u") == 0) {
      const size_t before = at_;
      at_ += 2;
      uint32_t low = 0;
      if (ParseHex4(&low) && low >= 0xDC00 && low < 0xE000) {
        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
      } else {
        at_ = before;  // not its pair: the next escape is read on its own
      }
    }
    if (out != nullptr) AppendUtf8(code, out);
    return true;
  }

  bool ParseHex4(uint32_t* code) {
    if (text_.size() - at_ < 4) return false;
    *code = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = KatibLower(text_[at_++]);
      if (KatibIsDigit(c)) {
        *code = *code * 16 + static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        *code = *code * 16 + static_cast<uint32_t>(c - 'a' + 10);
      } else {
        return false;
      }
    }
    return true;
  }

  std::string_view text_;
  size_t at_ = 0;
};

}  // namespace

bool KatibFilterAsEcmaScript(const std::string& re2, std::string* ecma_script, std::string* why) {
  std::string out;
  size_t at = 0;
  while (at < re2.size()) {
    const char c = re2[at];
    bool ok = true;
    size_t end = 0;
    if (c == '\\') {
      ok = KatibConvertEscape(re2, &at, &out, why);
    } else if (c == '[') {
      ok = KatibCopyBracket(re2, &at, &out, why);
    } else if (c == '(') {
      ok = KatibConvertGroupStart(re2, &at, &out, why);
    } else if (c == '{' && KatibIsRepetition(re2, at, &end)) {
      out.append(re2, at, end - at);
      at = end;
    } else {
      if (c == '{' || c == '}') out += '\\';  // a literal brace in RE2
      out += c;
      ++at;
    }
    if (!ok) return false;
  }
  *ecma_script = std::move(out);
  return true;
}

Status CompileMetricsFileFilter(const std::string& filter, std::regex* compiled) {
  const Status compiling = CompileUserRegex(filter, compiled);
  if (!compiling.ok()) return Status::BadInput("'" + filter + "' " + compiling.message());
  if (compiled->mark_count() < 2) {
    return Status::BadInput("'" + filter + "' needs two groups: the metric's name, then its value");
  }
  return Status::Ok();
}

Status KatibMetricsFile::Create(std::string path, Format format,
                                const std::vector<std::string>& filters, std::string objective,
                                KatibMetricsFile* file) {
  KatibMetricsFile created;
  created.path_ = std::move(path);
  created.format_ = format;
  created.objective_ = std::move(objective);
  const std::vector<std::string> defaults = {kKatibDefaultFilter};
  for (const std::string& filter : filters.empty() ? defaults : filters) {
    std::regex compiled;
    const Status compiling = CompileMetricsFileFilter(filter, &compiled);
    if (!compiling.ok()) {
      return Status::BadInput("metrics file " + created.path_ + ": filter " + compiling.message());
    }
    created.filters_.push_back(std::move(compiled));
  }
  *file = std::move(created);
  return Status::Ok();
}

std::string KatibMetricsFile::Where() const { return path_ + ":" + std::to_string(line_number_); }

void KatibMetricsFile::Restart() {
  offset_ = 0;
  partial_.clear();
  line_number_ = 0;
}

Status KatibMetricsFile::Poll(std::vector<std::string>* lines) {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::Ok();  // not written yet
    return Status::Failure("metrics file " + path_ + ": cannot open it: " + std::strerror(errno));
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    const std::string why = S_ISREG(info.st_mode) || info.st_mode == 0
                                ? std::string("cannot stat it: ") + std::strerror(errno)
                                : std::string("not a regular file");
    ::close(fd);
    return Status::Failure("metrics file " + path_ + ": " + why);
  }
  const bool replaced = started_ && (info.st_dev != device_ || info.st_ino != inode_);
  if (replaced || static_cast<uint64_t>(info.st_size) < offset_) Restart();
  started_ = true;
  device_ = info.st_dev;
  inode_ = info.st_ino;
  std::string chunk(kKatibReadChunkBytes, '\0');
  Status status = Status::Ok();
  while (status.ok()) {
    const ssize_t got = ::pread(fd, chunk.data(), chunk.size(), static_cast<off_t>(offset_));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      status =
          Status::Failure("metrics file " + path_ + ": cannot read it: " + std::strerror(errno));
    }
    if (got <= 0) break;
    offset_ += static_cast<uint64_t>(got);
    status = Consume(std::string_view(chunk.data(), static_cast<size_t>(got)), lines);
  }
  ::close(fd);
  return status;
}

Status KatibMetricsFile::Consume(std::string_view bytes, std::vector<std::string>* lines) {
  while (!bytes.empty()) {
    const size_t newline = bytes.find('\n');
    partial_.append(bytes.substr(0, newline));
    if (partial_.size() > kKatibMaxLineBytes) {
      return Status::Failure("metrics file " + path_ + ":" + std::to_string(line_number_ + 1) +
                             ": a line longer than 1 MiB (is this a metrics file?)");
    }
    if (newline == std::string_view::npos) return Status::Ok();
    bytes.remove_prefix(newline + 1);
    ++line_number_;
    if (!partial_.empty() && partial_.back() == '\r') partial_.pop_back();
    if (line_number_ == 1 && partial_.rfind(kUtf8ByteOrderMark, 0) == 0) {
      partial_.erase(0, kUtf8ByteOrderMark.size());
    }
    const std::string line = std::move(partial_);
    partial_.clear();
    HPO_RETURN_IF_ERROR(ConvertLine(line, lines));
  }
  return Status::Ok();
}

Status KatibMetricsFile::ConvertLine(const std::string& line,
                                     std::vector<std::string>* lines) const {
  return format_ == Format::kJson ? ConvertJsonLine(line, lines) : ConvertTextLine(line, lines);
}

Status KatibMetricsFile::ConvertTextLine(const std::string& line,
                                         std::vector<std::string>* lines) const {
  if (line.size() > kKatibMaxRegexLineBytes) return Status::Ok();
  std::vector<std::pair<std::string, std::string>> pairs;  // name, number token
  bool all_pair_names = true;
  for (const std::regex& filter : filters_) {
    for (auto match = std::sregex_iterator(line.begin(), line.end(), filter);
         match != std::sregex_iterator(); ++match) {
      const std::string name(KatibTrim((*match)[1].str()));
      const std::string value(KatibTrim((*match)[2].str()));
      if (name.empty() || value.empty()) continue;
      std::string token;
      if (!KatibReadNumber(value, &token)) {
        if (name != objective_) continue;
        return Status::Failure(Where() + ": the objective " + name + " is '" + value +
                               "', not a number");
      }
      all_pair_names = all_pair_names && KatibIsPairName(name);
      pairs.emplace_back(name, token);
    }
  }
  if (pairs.empty()) return Status::Ok();
  std::string converted;
  for (const auto& [name, token] : pairs) {
    if (!converted.empty()) converted += all_pair_names ? " " : ", ";
    converted += all_pair_names ? name + "=" + token : KatibJsonQuote(name) + ": " + token;
  }
  lines->push_back(all_pair_names ? converted : "{" + converted + "}");
  return Status::Ok();
}

Status KatibMetricsFile::ConvertJsonLine(const std::string& line,
                                         std::vector<std::string>* lines) const {
  if (KatibTrim(line).empty()) return Status::Ok();
  std::vector<KatibJsonMember> members;
  std::string why;
  if (!KatibJsonObjectLine(line).Parse(&members, &why)) {
    return Status::Failure(Where() + ": " + why + " (format JSON wants one object per line)");
  }
  std::string converted;
  for (const KatibJsonMember& member : members) {
    if (member.key == kKatibTimestampKey) continue;
    std::string value = member.raw_value;
    std::string token;
    if (member.kind == KatibJsonMember::Kind::kString &&
        KatibReadNumber(member.string_value, &token)) {
      value = token;
    } else if (member.key == objective_ && member.kind != KatibJsonMember::Kind::kNumber) {
      return Status::Failure(Where() + ": the objective " + member.key + " is " + member.raw_value +
                             ", not a number");
    }
    converted += (converted.empty() ? "" : ", ") + member.raw_key + ": " + value;
  }
  if (!converted.empty()) lines->push_back("{" + converted + "}");
  return Status::Ok();
}

}  // namespace hpo
