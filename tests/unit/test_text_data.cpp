// The torch-free text data of `task: text_classification` (core/src/text): TSV and CSV tables
// (round trips through Python's csv module, every error path), the tokenizer, the vocabulary
// (ordering, limits, files), the label map (numeric and string order) and LoadTextCorpus (CSR
// encoding, CLS and truncation, the carved validation split, errors naming files and lines).
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tasks/text_classification/delimited_table.hpp"
#include "tasks/text_classification/label_map.hpp"
#include "tasks/text_classification/text_corpus.hpp"
#include "tasks/text_classification/tokenizer.hpp"
#include "tasks/text_classification/vocabulary.hpp"

namespace hpo {
namespace {

const char kPython[] = "/usr/bin/python3";

// Expects BadInput whose message holds every one of `pieces`.
void ExpectBadInput(const Status& status, const std::vector<std::string>& pieces) {
  EXPECT_EQ(status.code(), Status::Code::kBadInput) << status.message();
  for (const std::string& piece : pieces) {
    EXPECT_NE(status.message().find(piece), std::string::npos)
        << "'" << piece << "' not in: " << status.message();
  }
}

std::string Hex(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char byte : bytes) {
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 15];
  }
  return hex;
}

class TextDataTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = testing::TempDir() + "hpo_text_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `content` to `name` in the test's folder; returns the path.
  std::string Write(const std::string& name, const std::string& content) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  std::vector<LabeledText> ReadOk(const std::string& path, TableFormat format) {
    std::vector<LabeledText> rows;
    const Status status = ReadLabeledTexts(path, format, "text", "label", &rows);
    EXPECT_TRUE(status.ok()) << status.message();
    return rows;
  }

  Status ReadTsv(const std::string& name, const std::string& content) {
    std::vector<LabeledText> rows;
    return ReadLabeledTexts(Write(name, content), TableFormat::kTsv, "text", "label", &rows);
  }

  std::string dir_;
};

// --- Tables ---

TEST_F(TextDataTest, ReadsEveryFieldThatPythonsCsvModuleWrites) {
  struct Example {
    std::string text;
    std::string label;
  };
  const std::vector<Example> examples = {
      {"plain words", "ham"},
      {"a\ttab and, a comma", "spam"},
      {"\"quoted\" at the start and a \"\"doubled\"\" pair", "ham"},
      {"ends with a quote\"", "label, with a comma"},
      {"two\nlines\nand a CRLF\r\nthere", "label\twith a tab"},
      {"a lone \r carriage return", "\"quoted label\""},
      {"", "empty text"},
      {"  leading and trailing spaces  ", " spaced "},
      {"naïve café — 日本語 🙂", "ünïcödé"},
      {"back\\slash and 'single' quotes", "1"},
      {std::string(5000, 'x') + "\n" + std::string(5000, ','), "-1"},
      {"\n", "newline only text"},
  };
  std::string hex;
  for (const Example& example : examples) {
    hex += Hex(example.text) + " " + Hex(example.label) + "\n";
  }
  const std::string fields = Write("fields.hex", hex);
  const std::string script = Write("write.py", R"(import csv, sys
folder = sys.argv[1]
rows = []
for number, line in enumerate(open(folder + '/fields.hex')):
    text, label = (bytes.fromhex(part).decode('utf-8') for part in line.split(' '))
    rows.append([str(number), text, label])
with open(folder + '/table.tsv', 'w', newline='', encoding='utf-8') as out:
    writer = csv.writer(out, delimiter='\t', lineterminator='\n')
    writer.writerow(['id', 'text', 'label'])
    writer.writerows(rows)
# The Excel dialect (CRLF), with a byte order mark and the label column first.
with open(folder + '/table.csv', 'w', newline='', encoding='utf-8-sig') as out:
    writer = csv.writer(out)
    writer.writerow(['label', 'id', 'text'])
    writer.writerows([[label, number, text] for number, text, label in rows])
)");
  const int status =
      std::system((std::string(kPython) + " '" + script + "' '" + dir_ + "'").c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the Python writer failed";

  for (const auto& [name, format] :
       {std::pair{"table.tsv", TableFormat::kTsv}, std::pair{"table.csv", TableFormat::kCsv}}) {
    SCOPED_TRACE(name);
    const std::vector<LabeledText> rows = ReadOk(dir_ + "/" + name, format);
    ASSERT_EQ(rows.size(), examples.size());
    int64_t line = 2;
    for (size_t i = 0; i < examples.size(); ++i) {
      EXPECT_EQ(rows[i].text, examples[i].text) << "row " << i;
      EXPECT_EQ(rows[i].label, examples[i].label) << "row " << i;
      EXPECT_EQ(rows[i].line, line) << "row " << i;
      for (const std::string* field : {&examples[i].text, &examples[i].label}) {
        line += std::count(field->begin(), field->end(), '\n');
      }
      ++line;
    }
  }
}

TEST_F(TextDataTest, ReadsCrlfBomAndIgnoresBlankLinesAtTheEnd) {
  const std::vector<LabeledText> rows = ReadOk(
      Write("t.tsv", "\xEF\xBB\xBFlabel\ttext\r\nham\thello\r\nspam\t\"a\r\nb\"\r\n\r\n \t\n"),
      TableFormat::kTsv);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].text, "hello");
  EXPECT_EQ(rows[1].text, "a\r\nb");
  EXPECT_EQ(rows[1].label, "spam");
  EXPECT_EQ(rows[1].line, 3);
}

TEST_F(TextDataTest, ReadsAHeaderWithoutRowsAndAFileWithoutAFinalNewline) {
  EXPECT_TRUE(ReadOk(Write("header.tsv", "text\tlabel\n"), TableFormat::kTsv).empty());
  const std::vector<LabeledText> rows =
      ReadOk(Write("t.csv", "text,label\n\"quoted, last\",\"x\""), TableFormat::kCsv);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].text, "quoted, last");
  EXPECT_EQ(rows[0].label, "x");
}

TEST_F(TextDataTest, TableErrorsNameTheFileLineAndColumn) {
  std::vector<LabeledText> rows;
  const std::string missing = dir_ + "/missing.tsv";
  ExpectBadInput(ReadLabeledTexts(missing, TableFormat::kTsv, "text", "label", &rows),
                 {missing, "No such file"});
  ExpectBadInput(ReadTsv("empty.tsv", ""), {"empty.tsv: empty file"});
  ExpectBadInput(ReadTsv("blank.tsv", "\xEF\xBB\xBF\n\r\n"), {"blank.tsv: empty file"});
  ExpectBadInput(ReadTsv("columns.tsv", "body\tlabel\tid\nx\ty\tz\n"),
                 {"columns.tsv: no column 'text'", "'body', 'label', 'id'"});
  ExpectBadInput(ReadTsv("twice.tsv", "text\tlabel\ttext\n"),
                 {"twice.tsv: column 'text' appears twice"});
  ExpectBadInput(
      ReadLabeledTexts(Write("same.tsv", "text\n"), TableFormat::kTsv, "text", "text", &rows),
      {"same.tsv: the text and label columns are both 'text'"});
  ExpectBadInput(ReadTsv("wide.tsv", "text\tlabel\na\tb\na\tb\tc\n"),
                 {"wide.tsv:3: 3 fields, the header has 2"});
  ExpectBadInput(ReadTsv("narrow.tsv", "text\tlabel\n\"two\nlines\"\tb\nonly one\n"),
                 {"narrow.tsv:4: 1 field, the header has 2"});
  ExpectBadInput(ReadTsv("open.tsv", "text\tlabel\na\tb\n\"never\nclosed\tb\n"),
                 {"open.tsv:3: column 1 ('text'): quoted field never closed"});
  ExpectBadInput(ReadTsv("open_header.tsv", "text\t\"label\n"),
                 {"open_header.tsv:1: column 2 of the header: quoted field never closed"});
  ExpectBadInput(ReadTsv("after.tsv", "text\tlabel\n\"a\nb\"c\tham\n"),
                 {"after.tsv:3: column 1 ('text'): a closing quote must be followed by"});
  ExpectBadInput(ReadTsv("nolabel.tsv", "text\tlabel\na\tham\nb\t\n"),
                 {"nolabel.tsv:3: column 2 ('label'): empty label"});
  ExpectBadInput(ReadTsv("gap.tsv", "text\tlabel\na\tham\n\nb\tspam\n"), {"gap.tsv:3: blank line"});
  ExpectBadInput(ReadLabeledTexts(Write("t.csv", "text,label\n\"a\",\"b\"x\n"), TableFormat::kCsv,
                                  "text", "label", &rows),
                 {"t.csv:2: column 2 ('label'): a closing quote"});
}

// --- Tokenizer ---

TEST(TokenizerTest, SplitsWordsAndPunctuationAndLowerCasesAscii) {
  EXPECT_EQ(Tokenize("Don't PANIC: 42km!"),
            (std::vector<std::string>{"don", "'", "t", "panic", ":", "42km", "!"}));
  EXPECT_EQ(Tokenize("Naïve CAFÉ 日本語,ok"),
            (std::vector<std::string>{"naïve", "cafÉ", "日本語", ",", "ok"}));
  EXPECT_EQ(Tokenize(" a\tb\nc\r\nd\v\fe\x01"
                     "f\x7Fg "),
            (std::vector<std::string>{"a", "b", "c", "d", "e", "f", "g"}));
  EXPECT_EQ(Tokenize("snake_case a--b [CLS] <a href=\"x\">"),
            (std::vector<std::string>{"snake", "_", "case", "a", "-", "-", "b", "[", "cls", "]",
                                      "<", "a", "href", "=", "\"", "x", "\"", ">"}));
  EXPECT_TRUE(Tokenize("").empty());
  EXPECT_TRUE(Tokenize(" \t\n").empty());
}

TEST(TokenizerTest, ForEachTokenStopsWhenTheVisitorSaysSo) {
  std::vector<std::string> seen;
  ForEachToken("one two three four", [&seen](const std::string& token) {
    seen.push_back(token);
    return seen.size() < 2;
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"one", "two"}));
}

// --- Vocabulary ---

std::vector<LabeledText> Texts(const std::vector<std::string>& texts) {
  std::vector<LabeledText> rows;
  for (const std::string& text : texts) rows.push_back({text, "label", 0});
  return rows;
}

TEST(VocabularyTest, OrdersByCountThenTokenAfterTheSpecialTokens) {
  Vocabulary vocabulary;
  ASSERT_TRUE(Vocabulary::Build(Texts({"b a B c", "C c d", "e"}), 1, 0, &vocabulary).ok());
  EXPECT_EQ(vocabulary.tokens(),
            (std::vector<std::string>{"[PAD]", "[UNK]", "[CLS]", "c", "b", "a", "d", "e"}));
  EXPECT_EQ(vocabulary.size(), 8);
  EXPECT_EQ(vocabulary.Id("c"), 3);
  EXPECT_EQ(vocabulary.Id("[PAD]"), Vocabulary::kPadId);
  EXPECT_EQ(vocabulary.Id("[CLS]"), Vocabulary::kClsId);
  EXPECT_EQ(vocabulary.Id("zebra"), Vocabulary::kUnknownId);
  EXPECT_EQ(vocabulary.Id("C"), Vocabulary::kUnknownId);  // tokens are lower case
}

TEST(VocabularyTest, AppliesMinCountAndMaxVocab) {
  const std::vector<LabeledText> train = Texts({"x x x y y z w w"});
  Vocabulary vocabulary;
  ASSERT_TRUE(Vocabulary::Build(train, 2, 0, &vocabulary).ok());
  EXPECT_EQ(vocabulary.tokens(),
            (std::vector<std::string>{"[PAD]", "[UNK]", "[CLS]", "x", "w", "y"}));
  ASSERT_TRUE(Vocabulary::Build(train, 1, 5, &vocabulary).ok());
  EXPECT_EQ(vocabulary.tokens(), (std::vector<std::string>{"[PAD]", "[UNK]", "[CLS]", "x", "w"}));
  ASSERT_TRUE(Vocabulary::Build(train, 1, 100, &vocabulary).ok());
  EXPECT_EQ(vocabulary.size(), 7);

  ExpectBadInput(Vocabulary::Build(train, 0, 0, &vocabulary), {"min_count", "got 0"});
  ExpectBadInput(Vocabulary::Build(train, 1, 3, &vocabulary), {"max_vocab", "got 3"});
  ExpectBadInput(Vocabulary::Build(train, 1, -1, &vocabulary), {"max_vocab", "got -1"});
}

TEST(VocabularyTest, EncodesWithClsAndTruncation) {
  Vocabulary vocabulary;
  ASSERT_TRUE(Vocabulary::Build(Texts({"good good bad"}), 1, 0, &vocabulary).ok());
  const int64_t good = vocabulary.Id("good");
  const int64_t bad = vocabulary.Id("bad");
  const int64_t unknown = Vocabulary::kUnknownId;
  const int64_t cls = Vocabulary::kClsId;

  std::vector<int64_t> ids = {42};  // Encode appends
  vocabulary.Encode("Good, BAD!", 10, false, &ids);
  EXPECT_EQ(ids, (std::vector<int64_t>{42, good, unknown, bad, unknown}));
  ids.clear();
  vocabulary.Encode("Good, BAD!", 10, true, &ids);
  EXPECT_EQ(ids, (std::vector<int64_t>{cls, good, unknown, bad, unknown}));
  ids.clear();
  vocabulary.Encode("good bad good bad", 3, true, &ids);
  EXPECT_EQ(ids, (std::vector<int64_t>{cls, good, bad}));
  ids.clear();
  vocabulary.Encode("good bad good bad", 3, false, &ids);
  EXPECT_EQ(ids, (std::vector<int64_t>{good, bad, good}));
  ids.clear();
  vocabulary.Encode("good", 1, true, &ids);
  EXPECT_EQ(ids, (std::vector<int64_t>{cls}));
  ids.clear();
  vocabulary.Encode("", 4, false, &ids);
  EXPECT_TRUE(ids.empty());
}

TEST_F(TextDataTest, LoadsVocabularyFilesAndMovesTheSpecialTokensToTheFront) {
  Vocabulary vocabulary;
  Status status =
      Vocabulary::Load(Write("plain.txt", "\xEF\xBB\xBFhello\r\nwörld\n,\n\n"), &vocabulary);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(vocabulary.tokens(),
            (std::vector<std::string>{"[PAD]", "[UNK]", "[CLS]", "hello", "wörld", ","}));

  status = Vocabulary::Load(Write("bert.txt", "[UNK]\nfoo\n[PAD]\nbar\n[CLS]\nbaz"), &vocabulary);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(vocabulary.tokens(),
            (std::vector<std::string>{"[PAD]", "[UNK]", "[CLS]", "foo", "bar", "baz"}));
  EXPECT_EQ(vocabulary.Id("baz"), 5);

  const std::string missing = dir_ + "/missing.txt";
  ExpectBadInput(Vocabulary::Load(missing, &vocabulary), {missing});
  ExpectBadInput(Vocabulary::Load(Write("empty.txt", "\n\n"), &vocabulary),
                 {"empty.txt: empty vocabulary file"});
  ExpectBadInput(Vocabulary::Load(Write("twice.txt", "foo\nbar\nfoo\n"), &vocabulary),
                 {"twice.txt:3: token 'foo' is already on line 1"});
  ExpectBadInput(Vocabulary::Load(Write("gap.txt", "foo\n\nbar\n"), &vocabulary),
                 {"gap.txt:2: blank line"});
  ExpectBadInput(Vocabulary::Load(Write("counts.txt", "foo\nbar 12\n"), &vocabulary),
                 {"counts.txt:2: token 'bar 12' contains whitespace"});
}

// --- Labels ---

std::vector<LabeledText> Labels(const std::vector<std::string>& labels) {
  std::vector<LabeledText> rows;
  for (size_t i = 0; i < labels.size(); ++i) {
    rows.push_back({"text", labels[i], static_cast<int64_t>(i) + 2});
  }
  return rows;
}

std::vector<std::string> ClassNames(const std::vector<std::string>& labels) {
  LabelMap map;
  const Status status = LabelMap::Build(Labels(labels), "train.tsv", &map);
  EXPECT_TRUE(status.ok()) << status.message();
  return map.names();
}

TEST(LabelMapTest, OrdersIntegersNumericallyAndOtherLabelsByteWise) {
  EXPECT_EQ(ClassNames({"10", "-1", "2", "0", "2", "10"}),
            (std::vector<std::string>{"-1", "0", "2", "10"}));
  EXPECT_EQ(ClassNames({"1", "01", "-3"}), (std::vector<std::string>{"-3", "01", "1"}));
  EXPECT_EQ(ClassNames({"10", "2", "ham"}), (std::vector<std::string>{"10", "2", "ham"}));
  EXPECT_EQ(ClassNames({"spam", "ham", "Spam", "é"}),
            (std::vector<std::string>{"Spam", "ham", "spam", "é"}));
  EXPECT_EQ(ClassNames({"+1", "-1"}), (std::vector<std::string>{"+1", "-1"}));  // '+': not integer
  EXPECT_EQ(ClassNames({"1.5", "2"}), (std::vector<std::string>{"1.5", "2"}));
  EXPECT_EQ(ClassNames({"99999999999999999999", "1"}),
            (std::vector<std::string>{"1", "99999999999999999999"}));  // beyond int64_t: text
}

TEST(LabelMapTest, IndexesRowsAndRejectsLabelsTheTrainingSplitLacks) {
  LabelMap map;
  ASSERT_TRUE(LabelMap::Build(Labels({"spam", "ham"}), "train.tsv", &map).ok());
  EXPECT_EQ(map.size(), 2);
  int64_t class_index = -1;
  ASSERT_TRUE(map.Index({"x", "spam", 7}, "test.tsv", &class_index).ok());
  EXPECT_EQ(class_index, 1);
  ExpectBadInput(map.Index({"x", "eggs", 7}, "test.tsv", &class_index),
                 {"test.tsv:7: label 'eggs' is not a label of the training split (train.tsv)"});
  ExpectBadInput(LabelMap::Build(Labels({"ham", "ham"}), "train.tsv", &map),
                 {"train.tsv: the training split has 1 distinct label"});
}

// --- LoadTextCorpus ---

TEST_F(TextDataTest, LoadsAndEncodesTheThreeSplits) {
  TextCorpusSpec spec;
  spec.format = TableFormat::kCsv;
  spec.train = Write("train.csv", "label,text\n1,Good movie\n0,bad movie\n1,\"good, good\"\n");
  spec.validation = Write("validation.csv", "label,text\n0,Awful\n");
  spec.test = Write("test.csv", "label,text\n1,good bad movie\n0,\n");
  TextCorpus corpus;
  const Status status = LoadTextCorpus(spec, 3, true, &corpus);
  ASSERT_TRUE(status.ok()) << status.message();

  EXPECT_EQ(corpus.labels.names(), (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(corpus.vocabulary.tokens(),
            (std::vector<std::string>{"[PAD]", "[UNK]", "[CLS]", "good", "movie", ",", "bad"}));
  const int64_t cls = Vocabulary::kClsId;
  const int64_t unknown = Vocabulary::kUnknownId;
  EXPECT_EQ(corpus.train.token_ids, (std::vector<int64_t>{cls, 3, 4, cls, 6, 4, cls, 3, 5}));
  EXPECT_EQ(corpus.train.offsets, (std::vector<int64_t>{0, 3, 6, 9}));
  EXPECT_EQ(corpus.train.labels, (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(corpus.validation.token_ids, (std::vector<int64_t>{cls, unknown}));
  EXPECT_EQ(corpus.validation.offsets, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(corpus.validation.labels, (std::vector<int64_t>{0}));
  EXPECT_EQ(corpus.test.token_ids, (std::vector<int64_t>{cls, 3, 6, cls}));
  EXPECT_EQ(corpus.test.offsets, (std::vector<int64_t>{0, 3, 4}));
  EXPECT_EQ(corpus.test.size(), 2);

  spec.vocabulary_file = Write("vocab.txt", "movie\n");
  ASSERT_TRUE(LoadTextCorpus(spec, 100, false, &corpus).ok());
  EXPECT_EQ(corpus.train.token_ids,
            (std::vector<int64_t>{unknown, 3, unknown, 3, unknown, unknown, unknown}));
}

TEST_F(TextDataTest, CarvesAFixedTenthOfTrainWhenNoValidationFileIsGiven) {
  std::string table = "text\tlabel\n";
  for (int i = 0; i < 50; ++i) {
    table += "common word" + std::to_string(i) + "\t" + (i % 2 == 0 ? "even" : "odd") + "\n";
  }
  TextCorpusSpec spec;
  spec.train = Write("train.tsv", table);
  spec.test = Write("test.tsv", "text\tlabel\nword1\todd\n");
  TextCorpus corpus;
  ASSERT_TRUE(LoadTextCorpus(spec, 8, false, &corpus).ok());
  EXPECT_EQ(corpus.train.size(), 45);
  EXPECT_EQ(corpus.validation.size(), 5);
  // The vocabulary holds the words of the 45 training rows only, then "common".
  EXPECT_EQ(corpus.vocabulary.size(), Vocabulary::kNumSpecialTokens + 1 + 45);
  std::set<int64_t> validation_words;
  for (int64_t id : corpus.validation.token_ids) validation_words.insert(id);
  EXPECT_EQ(validation_words, (std::set<int64_t>{Vocabulary::kUnknownId, 3}));

  TextCorpus again;
  ASSERT_TRUE(LoadTextCorpus(spec, 8, false, &again).ok());
  EXPECT_EQ(again.validation.labels, corpus.validation.labels);
  EXPECT_EQ(again.train.token_ids, corpus.train.token_ids);

  spec.train = Write("one.tsv", "text\tlabel\na\tb\n");
  ExpectBadInput(LoadTextCorpus(spec, 8, false, &corpus), {"one.tsv: the training split has 1"});
}

TEST_F(TextDataTest, CorpusErrorsNameTheFileAtFault) {
  TextCorpusSpec spec;
  spec.train = Write("train.tsv", "text\tlabel\na\tham\nb\tspam\nc\tham\n");
  spec.validation = Write("validation.tsv", "text\tlabel\na\tham\n");
  spec.test = Write("test.tsv", "text\tlabel\na\tham\nb\teggs\n");
  TextCorpus corpus;
  ExpectBadInput(
      LoadTextCorpus(spec, 8, true, &corpus),
      {"test.tsv:3: label 'eggs' is not a label of the training split (" + spec.train + ")"});

  spec.test = Write("header_only.tsv", "text\tlabel\n");
  ExpectBadInput(LoadTextCorpus(spec, 8, true, &corpus), {"header_only.tsv: no rows"});
  spec.test = Write("test.tsv", "text\tlabel\na\tham\n");
  ASSERT_TRUE(LoadTextCorpus(spec, 8, true, &corpus).ok());

  ExpectBadInput(LoadTextCorpus(spec, 0, true, &corpus), {"max_seq_length", "got 0"});
  spec.validation = Write("wide.tsv", "text\tlabel\na\tham\tx\n");
  ExpectBadInput(LoadTextCorpus(spec, 8, true, &corpus), {"wide.tsv:2: 3 fields"});
  spec.validation = "";
  spec.train = Write("two.tsv", "text\tlabel\na\tham\nb\tspam\n");
  spec.max_vocab = 2;
  ExpectBadInput(LoadTextCorpus(spec, 8, true, &corpus), {"max_vocab", "got 2"});
  spec.test = "";
  ExpectBadInput(LoadTextCorpus(spec, 8, true, &corpus), {"test file"});
}

}  // namespace
}  // namespace hpo
