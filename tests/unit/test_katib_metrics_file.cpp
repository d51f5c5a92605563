// KatibMetricsFile (platforms/katib/metrics_file.hpp): Katib's File metrics collector's file read
// as it grows (complete lines only, truncation and replacement start over), its TEXT format
// through metricsFormat filters and its JSON format (string numbers, "timestamp" dropped, bad
// lines failing), what MetricReader makes of the lines, and Go (RE2) filters as ECMAScript.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "platforms/katib/metrics_file.hpp"
#include "program/metric_reader.hpp"

namespace hpo {
namespace {

namespace fs = std::filesystem;

// Katib's own File collector example's filter (examples/v1beta1/metrics-collector).
const char kKatibExampleFilter[] = R"({metricName: ([\w|-]+), metricValue: ((-?\d+)(\.\d+)?)})";

class KatibMetricsFileTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = testing::TempDir() + "hpo_katib_file_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/metrics.log";
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  KatibMetricsFile Make(KatibMetricsFile::Format format, std::vector<std::string> filters = {},
                        const std::string& objective = "val_loss") {
    KatibMetricsFile file;
    const Status status = KatibMetricsFile::Create(path_, format, filters, objective, &file);
    EXPECT_TRUE(status.ok()) << status.message();
    return file;
  }

  void Append(const std::string& text) {
    std::ofstream out(path_, std::ios::app | std::ios::binary);
    out << text;
  }
  void Rewrite(const std::string& text) {
    std::ofstream out(path_, std::ios::trunc | std::ios::binary);
    out << text;
  }

  // The lines one poll returns; the poll must succeed.
  static std::vector<std::string> Poll(KatibMetricsFile* file) {
    std::vector<std::string> lines;
    const Status status = file->Poll(&lines);
    EXPECT_TRUE(status.ok()) << status.message();
    return lines;
  }

  std::string dir_;
  std::string path_;
};

using Lines = std::vector<std::string>;

TEST_F(KatibMetricsFileTest, AGrowingFileGivesEachCompleteLineOnce) {
  KatibMetricsFile file = Make(KatibMetricsFile::Format::kText);
  EXPECT_EQ(Poll(&file), Lines{});  // not written yet: no error
  EXPECT_FALSE(file.started());
  Append("epoch=1\nval_loss=0.5\n");
  EXPECT_EQ(Poll(&file), (Lines{"epoch=1", "val_loss=0.5"}));
  EXPECT_TRUE(file.started());
  EXPECT_EQ(file.path(), path_);
  EXPECT_EQ(Poll(&file), Lines{});  // nothing new
  Append("epoch=2\n");
  EXPECT_EQ(Poll(&file), Lines{"epoch=2"});
}

TEST_F(KatibMetricsFileTest, ALineWithoutItsNewlineWaitsForTheNextPoll) {
  KatibMetricsFile file = Make(KatibMetricsFile::Format::kText);
  Append("epoch=1\nval_lo");
  EXPECT_EQ(Poll(&file), Lines{"epoch=1"});
  Append("ss=0.25");
  EXPECT_EQ(Poll(&file), Lines{});
  Append("\r\n");  // a CRLF line end too
  EXPECT_EQ(Poll(&file), Lines{"val_loss=0.25"});
}

TEST_F(KatibMetricsFileTest, ATruncatedFileIsReadAgainFromItsBeginning) {
  KatibMetricsFile file = Make(KatibMetricsFile::Format::kText);
  Append("epoch=1 val_loss=0.9\nepoch=2 val_loss=0.8\n");
  EXPECT_EQ(Poll(&file).size(), 2u);
  Rewrite("epoch=1 val_loss=0.7\n");  // shorter than what was read
  EXPECT_EQ(Poll(&file), Lines{"epoch=1 val_loss=0.7"});
}

TEST_F(KatibMetricsFileTest, AReplacedFileIsReadAgainFromItsBeginning) {
  KatibMetricsFile file = Make(KatibMetricsFile::Format::kText);
  Append("val_loss=0.9\n");
  EXPECT_EQ(Poll(&file), Lines{"val_loss=0.9"});
  const std::string other = dir_ + "/other.log";
  {
    std::ofstream out(other);
    out << "val_loss=0.1\nval_loss=0.2\nval_loss=0.3\n";
  }
  fs::rename(other, path_);  // another inode, longer than what was read
  EXPECT_EQ(Poll(&file), (Lines{"val_loss=0.1", "val_loss=0.2", "val_loss=0.3"}));
}

TEST_F(KatibMetricsFileTest, TheDefaultFilterReadsKatibsNameValueForms) {
  KatibMetricsFile file = Make(KatibMetricsFile::Format::kText);
  // The forms const.go lists, blanks around '=', a log line's prose, an empty value.
  Append(
      "loss=0.3 accuracy=.98 Score=-7.53e-05 Validation-accuracy = +1E0\n"
      "2024-03-04T17:55:08Z INFO training step done\n"
      "epoch 3: val_loss=nan\n");
  EXPECT_EQ(Poll(&file), (Lines{"loss=0.3 accuracy=0.98 Score=-7.53e-05 Validation-accuracy=1"}));
}

TEST_F(KatibMetricsFileTest, CustomFiltersAreKatibsMetricsFormat) {
  std::string filter;
  std::string why;
  ASSERT_TRUE(KatibFilterAsEcmaScript(kKatibExampleFilter, &filter, &why)) << why;
  KatibMetricsFile file =
      Make(KatibMetricsFile::Format::kText, {filter, "(\\w+):\\s+(\\S+)"}, "accuracy");
  // Katib's own test data (file-metricscollector_test.go), and a second filter's match.
  Append(
      "2024-03-04T17:55:08Z INFO     {metricName: accuracy, metricValue: 0.8078};"
      "{metricName: loss, metricValue: 0.5183}\n"
      "{metricName: loss, metricValue: 0.8671}\n"
      "epoch=4 is not this format\n"
      "lr: 0.01\n");
  EXPECT_EQ(Poll(&file), (Lines{"accuracy=0.8078 loss=0.5183", "loss=0.8671", "lr=0.01"}));
}

TEST_F(KatibMetricsFileTest, AnObjectiveThatIsNotANumberFailsTheTrial) {
  KatibMetricsFile file = Make(KatibMetricsFile::Format::kText, {"(\\w+) is (\\w+)"}, "val_loss");
  Append("lr is high\nval_loss is bad\n");  // lr is left out, the objective fails
  std::vector<std::string> lines;
  const Status status = file.Poll(&lines);
  EXPECT_EQ(status.code(), Status::Code::kFailure);
  EXPECT_EQ(status.message(), path_ + ":2: the objective val_loss is 'bad', not a number");
}

TEST_F(KatibMetricsFileTest, NamesPairsCannotCarryComeAsAJsonObject) {
  KatibMetricsFile file = Make(KatibMetricsFile::Format::kText, {"(\\w+ \\w+)=(\\S+)"}, "x");
  Append("Validation accuracy=0.5\n");
  EXPECT_EQ(Poll(&file), Lines{"{\"Validation accuracy\": 0.5}"});
}

TEST_F(KatibMetricsFileTest, JsonLinesLoseTheirTimestampAndTheirNumbersTheirQuotes) {
  KatibMetricsFile file = Make(KatibMetricsFile::Format::kJson, {}, "loss");
  // What Katib's hypertune logger writes (file-metricscollector_test.go), a blank line, a
  // program that writes numbers as numbers, an RFC 3339 timestamp.
  Append(
      "{\"checkpoint_path\": \"\", \"global_step\": \"0\", \"loss\": \"0.22082142531871796\", "
      "\"timestamp\": 1638422847.28721, \"trial\": \"0\"}\n"
      "\n"
      "{\"epoch\": 2, \"loss\": 0.5, \"timestamp\": \"2021-12-02T14:27:50.000035161Z\", "
      "\"note\": {\"a\": [1, null]}}\n");
  EXPECT_EQ(Poll(&file),
            (Lines{"{\"checkpoint_path\": \"\", \"global_step\": 0, \"loss\": 0.22082142531871796, "
                   "\"trial\": 0}",
                   "{\"epoch\": 2, \"loss\": 0.5, \"note\": {\"a\": [1, null]}}"}));
}

TEST_F(KatibMetricsFileTest, ALineThatIsNotAJsonObjectFailsNamingFileAndLine) {
  KatibMetricsFile file = Make(KatibMetricsFile::Format::kJson, {}, "loss");
  Append("{\"loss\": \"0.5\"}\nloss=0.4\n");
  std::vector<std::string> lines;
  const Status status = file.Poll(&lines);
  EXPECT_EQ(status.code(), Status::Code::kFailure);
  EXPECT_EQ(status.message().find(path_ + ":2: not a JSON object"), 0u) << status.message();
  EXPECT_EQ(lines, Lines{"{\"loss\": 0.5}"});  // the lines before it still count
}

TEST_F(KatibMetricsFileTest, AJsonObjectiveThatIsNotANumberFails) {
  KatibMetricsFile file = Make(KatibMetricsFile::Format::kJson, {}, "loss");
  Append("{\"loss\": \"low\"}\n");
  std::vector<std::string> lines;
  const Status status = file.Poll(&lines);
  EXPECT_EQ(status.code(), Status::Code::kFailure);
  EXPECT_EQ(status.message(), path_ + ":1: the objective loss is \"low\", not a number");
}

TEST_F(KatibMetricsFileTest, MetricReaderMakesStepsOfTheLines) {
  for (const auto format : {KatibMetricsFile::Format::kText, KatibMetricsFile::Format::kJson}) {
    Rewrite(format == KatibMetricsFile::Format::kText
                ? "epoch=1\nval_loss=.5\nepoch=2\nval_loss=0.25\n"
                : "{\"epoch\": \"1\", \"val_loss\": \"0.5\", \"timestamp\": 1.5}\n"
                  "{\"epoch\": \"2\", \"val_loss\": \"0.25\", \"timestamp\": 2.5}\n");
    KatibMetricsFile file = Make(format);
    MetricReader reader;
    ASSERT_TRUE(MetricReader::Create({"val_loss"}, "val_loss", {}, &reader).ok());
    std::vector<EpochMetrics> steps;
    for (const std::string& line : Poll(&file)) reader.ReadLine(line, &steps);
    ASSERT_EQ(steps.size(), 2u);
    EXPECT_EQ(steps[0].epoch, 1);
    EXPECT_EQ(steps[0].values, std::vector<double>{0.5});
    EXPECT_EQ(steps[1].epoch, 2);
    EXPECT_EQ(steps[1].values, std::vector<double>{0.25});
    EXPECT_TRUE(reader.undeclared().empty());  // "timestamp" is gone
  }
}

TEST_F(KatibMetricsFileTest, ADirectoryIsAFailureAndABadFilterBadInput) {
  fs::create_directory(path_);
  KatibMetricsFile file = Make(KatibMetricsFile::Format::kText);
  std::vector<std::string> lines;
  EXPECT_EQ(file.Poll(&lines).code(), Status::Code::kFailure);
  const Status one_group = KatibMetricsFile::Create(path_, KatibMetricsFile::Format::kText,
                                                    {"(\\w+)=\\d+"}, "loss", &file);
  EXPECT_EQ(one_group.code(), Status::Code::kBadInput);
  EXPECT_EQ(one_group.message(), "metrics file " + path_ +
                                     ": filter '(\\w+)=\\d+' needs two groups: the metric's name, "
                                     "then its value");
  const Status unclosed = KatibMetricsFile::Create(path_, KatibMetricsFile::Format::kText,
                                                   {"(\\w+)=(\\d+"}, "loss", &file);
  EXPECT_EQ(
      unclosed.message().rfind(
          "metrics file " + path_ + ": filter '(\\w+)=(\\d+' is not a regular expression: ", 0),
      0u)
      << unclosed.message();
}

TEST(KatibFilterAsEcmaScript, RewritesWhatRe2ReadsOtherwise) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {kKatibDefaultFilter, kKatibDefaultFilter},  // nothing to rewrite
      {kKatibExampleFilter, R"(\{metricName: ([\w|-]+), metricValue: ((-?\d+)(\.\d+)?)\})"},
      {R"((?P<name>\w+)=(?<value>\d+){2,3})", R"((\w+)=(\d+){2,3})"},
      {R"(\A(\w+)\Q{x}.\E(\d+)\z)", R"(^(\w+)\{x\}\.(\d+)$)"},
      {R"([]a]([^]b])(x{,2}))", R"([\]a]([^\]b])(x\{,2\}))"},
      {R"(([[:alpha:]]+)(?:\s*)=(\d))", R"(([[:alpha:]]+)(?:\s*)=(\d))"},
  };
  for (const auto& [re2, expected] : cases) {
    std::string converted;
    std::string why;
    ASSERT_TRUE(KatibFilterAsEcmaScript(re2, &converted, &why)) << re2 << ": " << why;
    EXPECT_EQ(converted, expected) << re2;
    EXPECT_NO_THROW(std::regex(converted, std::regex::ECMAScript)) << converted;
  }
  for (const std::string re2 : {R"((?i)(\w+)=(\d+))", R"((\pL+)=(\d+))", R"((\w+)=([\p{N}]+))"}) {
    std::string converted;
    std::string why;
    EXPECT_FALSE(KatibFilterAsEcmaScript(re2, &converted, &why)) << re2;
    EXPECT_FALSE(why.empty());
  }
}

}  // namespace
}  // namespace hpo
