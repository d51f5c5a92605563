// Tests of FormatReport: leaderboard order, top_k, CSV quoting, JSON validity and the table header.

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "report/report.hpp"

namespace hpo {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TrialResult Trial(int64_t id, TrialStatus status, double objective, std::string optimizer) {
  TrialResult trial;
  trial.trial_id = id;
  trial.status = status;
  trial.objective = objective;
  trial.params = {{"lr", 0.1 / static_cast<double>(id + 1)},
                  {"layers", id + 1},
                  {"optimizer", std::move(optimizer)}};
  trial.epochs = 5;
  trial.duration_s = 10.25 * static_cast<double>(id + 1);
  trial.group = id % 2;
  return trial;
}

// Six trials: ties on the objective (ids 1 and 4), two without an objective (ids 2 and 5).
StudyContents TestStudy(const std::string& goal) {
  StudyContents study;
  study.layout.params = {{"lr", ParamType::kFloat, 0},
                         {"layers", ParamType::kInt, 0},
                         {"optimizer", ParamType::kString, 32}};
  study.layout.metric_names = {"val_loss", "val_accuracy"};
  study.attributes.metric_name = "val_accuracy";
  study.attributes.metric_goal = goal;
  study.trials = {Trial(0, TrialStatus::kCompleted, 0.5, "adam"),
                  Trial(1, TrialStatus::kCompleted, 0.75, "sgd"),
                  Trial(2, TrialStatus::kFailed, kNaN, "adam"),
                  Trial(3, TrialStatus::kStopped, 0.25, "sgd"),
                  Trial(4, TrialStatus::kCompleted, 0.75, "adam"),
                  Trial(5, TrialStatus::kFailed, kNaN, "sgd")};
  study.trials[2].message = "out of memory";
  return study;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The trial ids of a CSV report, in row order (second field; no quoted fields before it).
std::vector<int64_t> CsvTrialIds(const std::string& csv) {
  std::vector<int64_t> ids;
  const std::vector<std::string> lines = Lines(csv);
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t first = lines[i].find(',');
    ids.push_back(std::stoll(lines[i].substr(first + 1)));
  }
  return ids;
}

std::string Report(const StudyContents& study, ReportFormat format, int top_k) {
  ReportOptions options;
  options.format = format;
  options.top_k = top_k;
  return FormatReport(study, options);
}

TEST(ReportTest, MinimizeOrdersAscendingTiesByIdAndNaNLast) {
  const std::string csv = Report(TestStudy("minimize"), ReportFormat::kCsv, 0);
  EXPECT_EQ(CsvTrialIds(csv), (std::vector<int64_t>{3, 0, 1, 4, 2, 5}));
}

TEST(ReportTest, MaximizeOrdersDescendingTiesByIdAndNaNLast) {
  const std::string csv = Report(TestStudy("maximize"), ReportFormat::kCsv, 0);
  EXPECT_EQ(CsvTrialIds(csv), (std::vector<int64_t>{1, 4, 0, 3, 2, 5}));
}

TEST(ReportTest, TopKLimitsRowsInEveryFormat) {
  const StudyContents study = TestStudy("maximize");
  EXPECT_EQ(CsvTrialIds(Report(study, ReportFormat::kCsv, 2)), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(CsvTrialIds(Report(study, ReportFormat::kCsv, 100)).size(), 6u);

  const std::string json = Report(study, ReportFormat::kJson, 3);
  size_t trials = 0;
  for (size_t at = json.find("\"rank\""); at != std::string::npos;
       at = json.find("\"rank\"", at + 1)) {
    ++trials;
  }
  EXPECT_EQ(trials, 3u);

  const std::string table = Report(study, ReportFormat::kTable, 2);
  EXPECT_NE(table.find("(top 2 of 6 trials)"), std::string::npos) << table;
  const std::vector<std::string> lines = Lines(table);
  size_t header = 0;
  while (header < lines.size() && lines[header].rfind("rank", 0) != 0) ++header;
  ASSERT_LT(header + 2, lines.size()) << table;
  EXPECT_NE(lines[header + 1].find("completed"), std::string::npos);
  EXPECT_EQ(lines[header + 3], "(top 2 of 6 trials)");
}

TEST(ReportTest, TheTableListsWhatIsTheSameInEveryTrialOnceNotAsColumns) {
  StudyContents study = TestStudy("maximize");
  study.layout.params.push_back({"train_file", ParamType::kString, 64});
  for (TrialResult& trial : study.trials) trial.params.push_back({"train_file", "data/train.tsv"});
  const std::string table = Report(study, ReportFormat::kTable, 0);
  EXPECT_NE(table.find("\nSame in every trial: train_file=data/train.tsv\n"), std::string::npos)
      << table;
  const std::vector<std::string> lines = Lines(table);
  size_t header = 0;
  while (header < lines.size() && lines[header].rfind("rank", 0) != 0) ++header;
  ASSERT_LT(header, lines.size()) << table;
  EXPECT_EQ(lines[header].find("train_file"), std::string::npos) << table;
  EXPECT_NE(lines[header].find("optimizer"), std::string::npos) << table;  // it varies
  // The CSV keeps every column, and one differing trial makes it a column again.
  EXPECT_NE(Report(study, ReportFormat::kCsv, 0).find("train_file"), std::string::npos);
  study.trials[3].params.back().value = std::string("data/other.tsv");
  EXPECT_EQ(Report(study, ReportFormat::kTable, 0).find("Same in every trial"), std::string::npos);
}

TEST(ReportTest, CsvQuotesFieldsWithCommasAndQuotes) {
  StudyContents study = TestStudy("minimize");
  study.trials[3].params[2].value = std::string("sgd, \"nesterov\"");
  study.trials[3].message = "stopped\nat rung 1";
  const std::vector<std::string> lines = Lines(Report(study, ReportFormat::kCsv, 1));
  ASSERT_EQ(lines.size(), 3u);  // the message's newline is inside a quoted field
  EXPECT_EQ(lines[0],
            "rank,trial_id,status,objective,lr,layers,optimizer,epochs,duration_s,"
            "group,message");
  EXPECT_EQ(lines[1], "1,3,stopped,0.25,0.025,4,\"sgd, \"\"nesterov\"\"\",5,41,1,\"stopped");
  EXPECT_EQ(lines[2], "at rung 1\"");
}

// A hyperparameter named like a column of the report (a program's own `epochs`, as in the
// docs' example) is headed param:NAME in the CSV and the table, as in the study file: no two
// columns share a name (pandas would read the second as `epochs.1`).
TEST(ReportTest, AParameterNamedLikeAColumnIsHeadedParamColon) {
  StudyContents study = TestStudy("minimize");
  study.layout.params[1].name = "epochs";
  for (TrialResult& trial : study.trials) trial.params[1].name = "epochs";
  const std::vector<std::string> csv = Lines(Report(study, ReportFormat::kCsv, 1));
  ASSERT_EQ(csv.size(), 2u);
  EXPECT_EQ(csv[0],
            "rank,trial_id,status,objective,lr,param:epochs,optimizer,epochs,duration_s,group,"
            "message");
  EXPECT_EQ(csv[1], "1,3,stopped,0.25,0.025,4,sgd,5,41,1,");
  const std::string table = Report(study, ReportFormat::kTable, 0);
  EXPECT_NE(table.find("param:epochs"), std::string::npos) << table;
  EXPECT_EQ(table.find(" epochs "), table.rfind(" epochs ")) << table;  // one `epochs` column
}

TEST(ReportTest, CsvWritesRoundTripNumbersAndEmptyNaN) {
  StudyContents study = TestStudy("minimize");
  study.trials[0].objective = 0.1 + 0.2;
  const std::string csv = Report(study, ReportFormat::kCsv, 0);
  EXPECT_NE(csv.find(",0.30000000000000004,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("2,failed,,"), std::string::npos) << csv;
}

TEST(ReportTest, JsonParsesBackWithPython) {
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  StudyContents study = TestStudy("maximize");
  study.trials[0].params[2].value = std::string("quote \" backslash \\ tab \t bell \a");
  study.trials[2].message = "line one\nline two";
  study.extra_attributes["test_accuracy"] = 0.9125;
  study.extra_attributes["best_trial_id"] = int64_t{1};
  study.tables.push_back({"confusion", 2, 2, {3, 1, 0, 4}, {"ham", "spam"}});
  const std::string json = Report(study, ReportFormat::kJson, 0);

  std::string path = testing::TempDir() + "hpo_report_XXXXXX";
  const int fd = mkstemp(path.data());
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << json;
  const std::string check =
      "import json, sys\n"
      "r = json.load(open(sys.argv[1]))\n"
      "assert r['metric'] == 'val_accuracy' and r['goal'] == 'maximize', r\n"
      "assert r['best_trial_id'] == 1 and r['test_metrics'] == {'test_accuracy': 0.9125}, r\n"
      "assert r['test_tables'] == [{'name': 'test_confusion', 'labels': ['ham', 'spam'],"
      " 'rows': [[3, 1], [0, 4]]}], r\n"
      "t = r['trials']\n"
      "assert [x['trial_id'] for x in t] == [1, 4, 0, 3, 2, 5], t\n"
      "assert [x['rank'] for x in t] == [1, 2, 3, 4, 5, 6], t\n"
      "assert t[4]['objective'] is None and t[4]['status'] == 'failed', t[4]\n"
      "assert t[4]['message'] == 'line one\\nline two', t[4]\n"
      "assert t[2]['params'] == {'lr': 0.1, 'layers': 1,"
      " 'optimizer': 'quote \" backslash \\\\ tab \\t bell \\a'}, t[2]\n"
      "assert t[0]['epochs'] == 5 and t[0]['group'] == 1 and t[0]['duration_s'] == 20.5, t[0]\n";
  const std::string script = path + ".py";
  std::ofstream(script) << check;
  const int status = std::system(("/usr/bin/python3 '" + script + "' '" + path + "'").c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << json;
  std::filesystem::remove(path);
  std::filesystem::remove(script);
}

TEST(ReportTest, JsonOfEmptyStudyHasNulls) {
  StudyContents study;
  study.attributes.metric_name = "val_loss";
  const std::string json = Report(study, ReportFormat::kJson, 10);
  EXPECT_EQ(json,
            "{\n  \"metric\": \"val_loss\",\n  \"goal\": \"minimize\",\n"
            "  \"best_trial_id\": null,\n  \"test_metrics\": {},\n  \"test_tables\": [],\n"
            "  \"trials\": []\n}\n");
}

TEST(ReportTest, TableShowsHeaderBlockAndAlignedColumns) {
  StudyContents study = TestStudy("minimize");
  study.trials[2].message += "\nRuntimeError: the cause";
  const std::string table = Report(study, ReportFormat::kTable, 0);
  const std::vector<std::string> lines = Lines(table);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0], "Study: val_accuracy (minimize), 6 trials: 3 completed, 1 stopped, 2 failed");
  EXPECT_EQ(lines[1], "Best trial: 3 (val_accuracy 0.25)");
  EXPECT_EQ(table.find("Test split"), std::string::npos);
  size_t header = 0;
  while (header < lines.size() && lines[header].rfind("rank", 0) != 0) ++header;
  ASSERT_EQ(header + 11, lines.size()) << table;
  // The last column is right-aligned, so aligned rows all have the header's length.
  for (size_t i = header + 1; i < header + 7; ++i) {
    EXPECT_EQ(lines[i].size(), lines[header].size()) << lines[i];
  }
  EXPECT_EQ(lines[header],
            "rank  trial  status     objective         lr  layers  optimizer  epochs  duration_s");
  EXPECT_EQ(lines[header + 1],
            "   1      3  stopped         0.25      0.025       4  sgd             5        41.0");
  EXPECT_EQ(lines[header + 6],
            "   6      5  failed             -  0.0166667       6  sgd             5        61.5");
  // Then the failed trials' messages, in full.
  EXPECT_EQ(lines[header + 7], "");
  EXPECT_EQ(lines[header + 8], "Failed trials:");
  EXPECT_EQ(lines[header + 9], "  trial 2: out of memory");
  EXPECT_EQ(lines[header + 10], "    RuntimeError: the cause");
}

TEST(ReportTest, TableShowsTheTestMetricsAndTablesWhenTheStudyHasThem) {
  StudyContents study = TestStudy("maximize");
  study.extra_attributes["test_accuracy"] = 0.9125;
  study.extra_attributes["test_macro_f1"] = 0.875;
  study.extra_attributes["best_trial_id"] = int64_t{1};
  study.tables.push_back({"confusion", 2, 2, {30, 1, 0, 4}, {"ham", "spam"}});
  const std::string table = Report(study, ReportFormat::kTable, 10);
  EXPECT_NE(table.find("Best trial: 1 (val_accuracy 0.75)\n"), std::string::npos) << table;
  EXPECT_NE(table.find("Test split (trial 1): test_accuracy 0.9125 test_macro_f1 0.875\n"),
            std::string::npos)
      << table;
  EXPECT_NE(
      table.find("test_confusion:\n        ham  spam\n   ham   30     1\n  spam    0     4\n"),
      std::string::npos)
      << table;
}

}  // namespace
}  // namespace hpo
