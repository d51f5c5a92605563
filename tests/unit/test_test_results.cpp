// A command trial's test results file (tasks/command/test_results.hpp): metrics named as the
// built-in tasks name theirs, tables with labels, and one clear BadInput for each malformed file.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "tasks/command/test_results.hpp"

namespace hpo {
namespace {

class TestResultsTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = testing::TempDir() + "hpo_test_results_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    path_ = pattern + "/" + kTestResultsFile;
  }
  void TearDown() override {
    std::filesystem::remove_all(std::filesystem::path(path_).parent_path());
  }

  Status Read(const std::string& text) {
    std::ofstream(path_) << text;
    metrics_.clear();
    tables_.clear();
    return ReadTestResults(path_, &metrics_, &tables_);
  }

  std::string path_;
  std::vector<std::pair<std::string, double>> metrics_;
  std::vector<MetricTable> tables_;
};

TEST_F(TestResultsTest, MetricsAndAConfusionMatrixAsTheBuiltInTasksGiveThem) {
  const Status read = Read(
      R"({"test_accuracy": 0.91, "macro_f1": 0.875, "loss": 2.5e-1,
          "confusion": {"labels": ["neg", "pos"], "rows": [[40, 3], [5, 52]]}})");
  ASSERT_TRUE(read.ok()) << read.message();
  EXPECT_EQ(metrics_, (std::vector<std::pair<std::string, double>>{
                          {"test_accuracy", 0.91}, {"test_macro_f1", 0.875}, {"test_loss", 0.25}}));
  ASSERT_EQ(tables_.size(), 1u);
  EXPECT_EQ(tables_[0].name, "confusion");
  EXPECT_EQ(tables_[0].rows, 2);
  EXPECT_EQ(tables_[0].columns, 2);
  EXPECT_EQ(tables_[0].values, (std::vector<double>{40, 3, 5, 52}));
  EXPECT_EQ(tables_[0].labels, (std::vector<std::string>{"neg", "pos"}));
}

TEST_F(TestResultsTest, AMalformedFileIsOneBadInputNamingTheFileAndMember) {
  const std::pair<const char*, const char*> kBad[] = {
      {"[1, 2]", ": must be one JSON object"},
      {"{\"accuracy\": \"high\"}", ": accuracy: must be a number (a test metric) or a table"},
      {"{\"confusion\": {\"rows\": [[1, 2], [3]]}}",
       ": confusion.rows[1]: has 1 numbers, the first row 2"},
      {"{\"confusion\": {\"rows\": [[1, 2]], \"labels\": [\"a\"]}}",
       ": confusion.labels: must be a list of 2 names, one per column"},
      {"{\"confusion\": {\"rows\": [[1, \"x\"]]}}", ": confusion.rows[0][1]: must be a number"},
      {"{\"confusion\": {\"rows\": [[1]], \"cols\": 1}}", ": confusion.cols: not part of a table"},
      {"{\"a\": ", ": not JSON"},
  };
  for (const auto& [text, error] : kBad) {
    const Status read = Read(text);
    EXPECT_EQ(read.code(), Status::Code::kBadInput) << text;
    EXPECT_EQ(read.message().find(path_ + error), 0u) << read.message();
  }
}

}  // namespace
}  // namespace hpo
