// Tests of FormatHtmlReport: the embedded study JSON (read back with Python), the axes it gives
// the plot (from the config, or from the data when the config does not parse), that no study text
// can break out of the page's script or markup, that the page needs nothing from the network, and
// the best trial's test-split section (its metrics, the confusion matrix as a heatmap).

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hpo/task_catalog.hpp"
#include "report/report.hpp"
#include "study/study_file.hpp"
#include "tasks/classifier_description.hpp"

namespace hpo {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

constexpr char kConfig[] = R"(task: fashion_mnist
sweep:
  method: random
  run_cap: 3
  metric: {name: val_accuracy, goal: maximize}
  parameters:
    lr: {distribution: log_uniform_values, min: 0.0001, max: 0.1}
    optimizer: {values: [sgd, adamw, adam]}
    width: {distribution: int_uniform, min: 4, max: 64}
    dropout: {value: 0.25}
epochs: 3
)";

TrialResult Trial(int64_t id, TrialStatus status, double objective, double lr,
                  std::string optimizer, int64_t width) {
  TrialResult trial;
  trial.trial_id = id;
  trial.status = status;
  trial.objective = objective;
  trial.params = {
      {"lr", lr}, {"optimizer", std::move(optimizer)}, {"width", width}, {"dropout", 0.25}};
  trial.group = 0;
  trial.duration_s = 1.5;
  return trial;
}

// Curves report val_loss then val_accuracy; the sweep metric is val_accuracy.
void AddCurve(TrialResult* trial, const std::vector<double>& accuracies) {
  for (size_t e = 0; e < accuracies.size(); ++e) {
    trial->curve.push_back({static_cast<int64_t>(e + 1), {1.0 - accuracies[e], accuracies[e]}});
  }
  trial->epochs = static_cast<int64_t>(accuracies.size());
  if (!accuracies.empty()) trial->objective = accuracies.back();
}

StudyContents TestStudy() {
  StudyContents study;
  study.layout.params = {{"lr", ParamType::kFloat, 0},
                         {"optimizer", ParamType::kString, 16},
                         {"width", ParamType::kInt, 0},
                         {"dropout", ParamType::kFloat, 0}};
  study.layout.metric_names = {"val_loss", "val_accuracy"};
  study.attributes.config = kConfig;
  study.attributes.metric_name = "val_accuracy";
  study.attributes.metric_goal = "maximize";
  study.attributes.world_size = 4;
  study.attributes.start_time = "2026-11-23T18:00:00Z";
  study.attributes.version = "0.1.0";
  study.trials = {Trial(0, TrialStatus::kCompleted, 0.0, 0.001, "adam", 16),
                  Trial(1, TrialStatus::kStopped, 0.0, 0.05, "sgd", 8),
                  Trial(2, TrialStatus::kFailed, kNaN, 0.0002, "adamw", 32)};
  AddCurve(&study.trials[0], {0.7, 0.8, 0.85});
  AddCurve(&study.trials[1], {0.5});
  AddCurve(&study.trials[2], {0.6, kNaN});
  study.trials[2].objective = kNaN;
  study.trials[2].message = "loss diverged";
  study.extra_attributes["test_accuracy"] = 0.84;
  return study;
}

// Runs `check` (Python) with the path of a file holding `text`; true when it exits 0.
bool PythonCheck(const std::string& text, const std::string& check) {
  std::string path = testing::TempDir() + "hpo_html_XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) return false;
  close(fd);
  std::ofstream(path) << text;
  const std::string script = path + ".py";
  std::ofstream(script) << check;
  const int status = std::system(("/usr/bin/python3 '" + script + "' '" + path + "'").c_str());
  std::filesystem::remove(path);
  std::filesystem::remove(script);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Python that loads the page's study JSON into `r`.
constexpr char kLoadStudy[] =
    "import json, re, sys\n"
    "page = open(sys.argv[1]).read()\n"
    "m = re.search(r'<script id=\"hpo-study\" type=\"application/json\">(.*?)</script>', page,"
    " re.S)\n"
    "r = json.loads(m.group(1))\n";

size_t Count(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

TEST(HtmlReportTest, EmbedsEveryTrialBestFirstWithItsMetricCurve) {
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  const std::string page = FormatHtmlReport(TestStudy());
  const std::string check =
      std::string(kLoadStudy) +
      "assert r['metric'] == 'val_accuracy' and r['goal'] == 'maximize', r\n"
      "assert r['best_trial_id'] == 0, r\n"
      "assert r['params'] == ['lr', 'optimizer', 'width', 'dropout'], r['params']\n"
      "t = r['trials']\n"
      "assert [x['trial_id'] for x in t] == [0, 1, 2], t\n"
      "assert [x['status'] for x in t] == ['completed', 'stopped', 'failed'], t\n"
      "assert t[0]['curve'] == [[1, 0.7], [2, 0.8], [3, 0.85]], t[0]\n"
      "assert t[0]['params'] == {'lr': 0.001, 'optimizer': 'adam', 'width': 16,"
      " 'dropout': 0.25}, t[0]\n"
      "assert t[1]['epochs'] == 1 and t[1]['objective'] == 0.5, t[1]\n"
      "assert t[2]['objective'] is None and t[2]['curve'] == [[1, 0.6], [2, None]], t[2]\n"
      "assert t[2]['message'] == 'loss diverged', t[2]\n";
  EXPECT_TRUE(PythonCheck(page, check)) << page;
  EXPECT_NE(page.find("Best trial: <b>0</b>, val_accuracy 0.85"), std::string::npos) << page;
  EXPECT_NE(page.find("test_accuracy 0.84"), std::string::npos);
  EXPECT_NE(page.find("3 trials: 1 completed, 1 stopped, 1 failed"), std::string::npos);
}

TEST(HtmlReportTest, AxesFollowTheConfig) {
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  const std::string page = FormatHtmlReport(TestStudy());
  // lr is log-scaled over the config's bounds (wider than the trials' 0.0002..0.05); the
  // categories keep the config's order; width spans int_uniform's bounds; the constant dropout
  // gets no axis.
  const std::string check = std::string(kLoadStudy) +
                            "a = r['axes']\n"
                            "assert [x['name'] for x in a] == ['lr', 'optimizer', 'width'], a\n"
                            "assert a[0] == {'name': 'lr', 'scale': 'log', 'min': 0.0001,"
                            " 'max': 0.1}, a[0]\n"
                            "assert a[1] == {'name': 'optimizer', 'scale': 'categorical',"
                            " 'categories': ['sgd', 'adamw', 'adam']}, a[1]\n"
                            "assert a[2] == {'name': 'width', 'scale': 'linear', 'min': 4,"
                            " 'max': 64}, a[2]\n";
  EXPECT_TRUE(PythonCheck(page, check)) << page;
}

TEST(HtmlReportTest, AxesFollowTheDataWhenTheConfigDoesNotParse) {
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  StudyContents study = TestStudy();
  study.attributes.config = "not: [a config";
  const std::string page = FormatHtmlReport(study);
  // lr spans 0.0002..0.05 (2.4 decades: linear); strings sort; the constant is an axis too.
  const std::string check = std::string(kLoadStudy) +
                            "a = r['axes']\n"
                            "assert [x['name'] for x in a] == ['lr', 'optimizer', 'width',"
                            " 'dropout'], a\n"
                            "assert a[0] == {'name': 'lr', 'scale': 'linear', 'min': 0.0002,"
                            " 'max': 0.05}, a[0]\n"
                            "assert a[1]['categories'] == ['adam', 'adamw', 'sgd'], a[1]\n"
                            "assert a[2] == {'name': 'width', 'scale': 'linear', 'min': 8,"
                            " 'max': 32}, a[2]\n";
  EXPECT_TRUE(PythonCheck(page, check)) << page;

  study.trials[1].params[0].value = 1e-6;  // now 4.7 decades: log
  const std::string log_check =
      std::string(kLoadStudy) + "assert r['axes'][0]['scale'] == 'log', r['axes'][0]\n";
  EXPECT_TRUE(PythonCheck(FormatHtmlReport(study), log_check));
}

TEST(HtmlReportTest, AxesFollowTheConfigOfATaskFromTheGivenCatalog) {
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  StudyContents study = TestStudy();
  std::string config = kConfig;
  config.replace(0, config.find('\n'), "task: my_task");
  study.attributes.config = config;
  TaskCatalog catalog;
  catalog.Add(
      MakeTaskDescription("my_task", ClassifierHyperparameters(), {"val_loss", "val_accuracy"}));
  const std::string config_axis = std::string(kLoadStudy) +
                                  "assert r['axes'][0] == {'name': 'lr', 'scale': 'log',"
                                  " 'min': 0.0001, 'max': 0.1}, r['axes']\n";
  EXPECT_TRUE(PythonCheck(FormatHtmlReport(study, catalog), config_axis));
  // The built-in tasks do not know my_task: the config does not parse and the data rules.
  const std::string data_axis =
      std::string(kLoadStudy) + "assert r['axes'][0]['min'] == 0.0002, r['axes']\n";
  EXPECT_TRUE(PythonCheck(FormatHtmlReport(study), data_axis));
}

TEST(HtmlReportTest, ACommandSweepsAxesDoNotDependOnTheFolderTheReportRunsIn) {
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  // The study of a command sweep whose program sat beside its config, read where there is no
  // such program: the axes still come from the stored config (lr's bounds, not its data's).
  StudyContents study = TestStudy();
  std::string config = kConfig;
  config.replace(0, config.find('\n'), "metrics: [val_loss, val_accuracy]");
  config.replace(config.find("sweep:\n"), 7, "sweep:\n  program: nowhere/train_here.py\n");
  study.attributes.config = config;
  ASSERT_NE(access("nowhere/train_here.py", F_OK), 0);
  const std::string axes = std::string(kLoadStudy) +
                           "assert r['axes'][0] == {'name': 'lr', 'scale': 'log',"
                           " 'min': 0.0001, 'max': 0.1}, r['axes']\n";
  EXPECT_TRUE(PythonCheck(FormatHtmlReport(study), axes));
}

TEST(HtmlReportTest, NoStudyTextEndsTheScriptOrTheMarkup) {
  StudyContents study = TestStudy();
  study.attributes.config = std::string(kConfig) + "# </pre><script>alert(1)</script>\n";
  study.trials[2].message = "</script><script>alert(2)</script><!--";
  study.attributes.metric_name = "val_accuracy</title>";
  study.tables.push_back(
      {"confusion", 2, 2, {1, 2, 3, 4}, {"</script><script>alert(3)</script>", "</td></table>"}});
  const std::string page = FormatHtmlReport(study);
  // The page's own three script elements close; nothing from the study adds a tag.
  EXPECT_EQ(Count(page, "</script>"), 3u) << page;
  EXPECT_EQ(Count(page, "<script"), 3u) << page;
  EXPECT_EQ(Count(page, "</pre>"), 1u) << page;
  EXPECT_EQ(Count(page, "</title>"), 1u) << page;
  EXPECT_NE(page.find("\\u003c/script>\\u003cscript>alert(2)"), std::string::npos) << page;
  EXPECT_NE(page.find("# &lt;/pre&gt;&lt;script&gt;"), std::string::npos) << page;
  // The class names, in the heatmap's heads and in the embedded JSON.
  // The page's three tables close: the test metrics', the confusion matrix's and the trials'.
  EXPECT_EQ(Count(page, "</table>"), 3u) << page;
  EXPECT_NE(page.find("<th scope=\"col\">&lt;/script&gt;&lt;script&gt;alert(3)"), std::string::npos)
      << page;
  EXPECT_NE(page.find("\"labels\": [\"\\u003c/script>\\u003cscript>alert(3)"), std::string::npos)
      << page;
}

TEST(HtmlReportTest, PageIsSelfContained) {
  const std::string page = FormatHtmlReport(TestStudy());
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("HpoReport.render("), std::string::npos) << "the script is embedded";
  EXPECT_NE(page.find("svg polyline.dimmed"), std::string::npos) << "the stylesheet is embedded";
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find(" src="), std::string::npos);
  // The one URL is the SVG namespace, which is a name, not a fetch.
  EXPECT_EQ(Count(page, "http"), Count(page, "http://www.w3.org/2000/svg"));
}

TEST(HtmlReportTest, EmptyStudyGivesAPageWithoutTrials) {
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  StudyContents study = TestStudy();
  study.trials.clear();
  study.extra_attributes.clear();
  const std::string page = FormatHtmlReport(study);
  const std::string check = std::string(kLoadStudy) +
                            "assert r['trials'] == [] and r['best_trial_id'] is None, r\n"
                            "assert r['axes'][0]['min'] == 0.0001, r['axes']\n";
  EXPECT_TRUE(PythonCheck(page, check)) << page;
  EXPECT_EQ(page.find("Best trial"), std::string::npos);
}

// A study whose best trial was evaluated on the test split: three metrics and a 3x3 confusion
// matrix whose class names need escaping. Rows hold 100, 10 and 5 samples, so the row-normalised
// shade of the 5 correct "<b>x</b>" is darker than that of the 50 correct "-1".
StudyContents StudyWithTestResults() {
  StudyContents study = TestStudy();
  study.extra_attributes.clear();
  study.extra_attributes["best_trial_id"] = int64_t{0};
  study.extra_attributes["test_loss"] = 0.4;
  study.extra_attributes["test_accuracy"] = 0.63;
  study.extra_attributes["test_macro_f1"] = 0.71;
  study.tables.push_back(
      {"confusion", 3, 3, {50, 30, 20, 1, 8, 1, 0, 0, 5}, {"-1", "0", "<b>x</b>"}});
  return study;
}

// The part of `page` from `from` to the next `to` (empty when `from` is not there).
std::string Between(const std::string& page, const std::string& from, const std::string& to) {
  const size_t start = page.find(from);
  if (start == std::string::npos) return "";
  const size_t end = page.find(to, start);
  return page.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// The heatmap's count cells in page order.
struct Cell {
  bool diagonal;
  std::string style;
  std::string text;
};
std::vector<Cell> CountCells(const std::string& html) {
  static const std::regex cell(
      R"re(<td( class="diagonal")? style="([^"]*)" title="[^"]*">([^<]*)</td>)re");
  std::vector<Cell> cells;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), cell); it != std::sregex_iterator();
       ++it) {
    cells.push_back({(*it)[1].matched, (*it)[2].str(), (*it)[3].str()});
  }
  return cells;
}

TEST(HtmlReportTest, TestSplitSectionShowsTheBestTrialsMetrics) {
  const std::string page = FormatHtmlReport(StudyWithTestResults());
  EXPECT_EQ(Count(page, "<section id=\"test\">"), 1u) << page;
  const std::string section = Between(page, "<section id=\"test\">", "<h2>Hyperparameters");
  EXPECT_NE(section.find("<p class=\"guide\">How trial 0, the best by val_accuracy, does on"),
            std::string::npos)
      << section;
  EXPECT_NE(section.find("<caption>Test metrics of trial 0</caption>"), std::string::npos)
      << section;
  // Every test_* attribute by name (in the study's attribute order), nothing else.
  const std::string metrics = Between(section, "<table class=\"test-metrics\">", "</table>");
  EXPECT_NE(metrics.find("<tr><td>test_accuracy</td><td>0.63</td></tr>\n"
                         "<tr><td>test_loss</td><td>0.4</td></tr>\n"
                         "<tr><td>test_macro_f1</td><td>0.71</td></tr>\n"),
            std::string::npos)
      << metrics;
  EXPECT_EQ(metrics.find("best_trial_id"), std::string::npos) << metrics;
  // After the summary, before the plots.
  EXPECT_LT(page.find("<p class=\"summary\">Started"), page.find("<section id=\"test\">"));

  // A metric of any name, without a recorded best trial: the section names "the best trial".
  StudyContents study = TestStudy();
  study.extra_attributes = {{"test_rmse", 1.25}};
  const std::string other = FormatHtmlReport(study);
  EXPECT_NE(other.find("<caption>Test metrics of the best trial</caption>"), std::string::npos)
      << other;
  EXPECT_NE(other.find("<tr><td>test_rmse</td><td>1.25</td></tr>"), std::string::npos) << other;
  EXPECT_EQ(other.find("<section id=\"confusion\">"), std::string::npos) << other;
}

TEST(HtmlReportTest, ConfusionMatrixIsARowNormalisedHeatmapWithEscapedClassNames) {
  const std::string page = FormatHtmlReport(StudyWithTestResults());
  EXPECT_EQ(Count(page, "<section id=\"confusion\">"), 1u) << page;
  EXPECT_LT(page.find("<section id=\"test\">"), page.find("<section id=\"confusion\">"));
  const std::string matrix = Between(page, "<section id=\"confusion\">", "</section>");
  EXPECT_NE(matrix.find("<h3>Confusion matrix (test_confusion)</h3>"), std::string::npos) << matrix;
  // Axis names, and the class names on both axes, escaped.
  EXPECT_NE(matrix.find(">predicted</th>"), std::string::npos) << matrix;
  EXPECT_NE(matrix.find("<span>true</span>"), std::string::npos) << matrix;
  EXPECT_NE(matrix.find("<th scope=\"col\">-1</th><th scope=\"col\">0</th>"
                        "<th scope=\"col\">&lt;b&gt;x&lt;/b&gt;</th>"),
            std::string::npos)
      << matrix;
  EXPECT_NE(matrix.find("<th scope=\"row\">&lt;b&gt;x&lt;/b&gt;</th>"), std::string::npos)
      << matrix;
  EXPECT_EQ(page.find("<b>x</b>"), std::string::npos) << page;
  // The counts row by row (rows = true class), the diagonal marked, the row totals beside.
  const std::vector<Cell> cells = CountCells(matrix);
  ASSERT_EQ(cells.size(), 9u) << matrix;
  const std::vector<std::string> counts = {"50", "30", "20", "1", "8", "1", "0", "0", "5"};
  for (size_t i = 0; i < cells.size(); ++i) {
    EXPECT_EQ(cells[i].text, counts[i]) << i;
    EXPECT_EQ(cells[i].diagonal, i % 4 == 0) << i;
  }
  EXPECT_NE(matrix.find("<td class=\"total\">100</td></tr>"), std::string::npos) << matrix;
  EXPECT_NE(matrix.find("<td class=\"total\">5</td></tr>"), std::string::npos) << matrix;
  // Shades follow the share of the row, not the count: 50 of 100 half way, 5 of 5 the darkest
  // (with white text), 0 white.
  EXPECT_NE(cells[0].style.find("rgb(132,152,181)"), std::string::npos) << cells[0].style;
  EXPECT_NE(cells[8].style.find("rgb(8,48,107)"), std::string::npos) << cells[8].style;
  EXPECT_NE(cells[8].style.find("color: white"), std::string::npos) << cells[8].style;
  EXPECT_NE(cells[6].style.find("rgb(255,255,255)"), std::string::npos) << cells[6].style;
  EXPECT_EQ(cells[6].style.find("color: white"), std::string::npos) << cells[6].style;
  EXPECT_NE(matrix.find("title=\"true &lt;b&gt;x&lt;/b&gt;, predicted &lt;b&gt;x&lt;/b&gt;: 5 "
                        "(100.0% of true &lt;b&gt;x&lt;/b&gt;)\""),
            std::string::npos)
      << matrix;
}

TEST(HtmlReportTest, OtherTestTablesAreDrawnAsPlainMatrices) {
  StudyContents study = TestStudy();
  study.extra_attributes.clear();
  study.tables.push_back({"trials", 1, 2, {0.5, 2}, {}});  // no labels: numbered
  const std::string page = FormatHtmlReport(study);
  // Tables alone make the section, without a metrics table. The table's section id keeps the
  // test_ prefix, so it cannot take the id of the element the script draws the trials into.
  EXPECT_EQ(Count(page, "<section id=\"test\">"), 1u) << page;
  EXPECT_EQ(page.find("class=\"test-metrics\""), std::string::npos) << page;
  EXPECT_EQ(Count(page, "id=\"trials\""), 1u) << page;
  const std::string table = Between(page, "<section id=\"test_trials\">", "</section>");
  EXPECT_NE(table.find("<h3>test_trials</h3>"), std::string::npos) << page;
  EXPECT_NE(table.find("<tr><td></td><th scope=\"col\">0</th><th scope=\"col\">1</th></tr>\n"
                       "<tr><th scope=\"row\">0</th><td>0.5</td><td>2</td></tr>"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find("predicted"), std::string::npos) << table;
}

TEST(HtmlReportTest, NoTestSectionWithoutTestResults) {
  StudyContents study = TestStudy();
  study.extra_attributes.clear();
  study.extra_attributes["best_trial_id"] = int64_t{0};
  study.extra_attributes["best_model"] = std::string("models/trial_0.pt");
  const std::string page = FormatHtmlReport(study);
  EXPECT_EQ(page.find("<section id=\"test\">"), std::string::npos) << page;
  EXPECT_EQ(page.find("<section id=\"confusion\">"), std::string::npos) << page;
  EXPECT_EQ(page.find("Test split"), std::string::npos) << page;
  EXPECT_EQ(page.find("predicted"), std::string::npos) << page;
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  const std::string check =
      std::string(kLoadStudy) + "assert r['test_metrics'] == {} and r['test_tables'] == [], r\n";
  EXPECT_TRUE(PythonCheck(page, check)) << page;
}

TEST(HtmlReportTest, EmbedsTheTestResultsAsTheJsonReportWritesThem) {
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  const StudyContents study = StudyWithTestResults();
  ReportOptions options;
  options.format = ReportFormat::kJson;
  std::string json_hex;  // `hpo report --format json`, handed to Python as hex
  for (unsigned char c : FormatReport(study, options)) {
    char digits[3];
    std::snprintf(digits, sizeof(digits), "%02x", c);
    json_hex += digits;
  }
  const std::string check =
      std::string(kLoadStudy) + "j = json.loads(bytes.fromhex('" + json_hex + "').decode())\n" +
      "assert r['test_metrics'] == {'test_accuracy': 0.63, 'test_loss': 0.4,"
      " 'test_macro_f1': 0.71}, r['test_metrics']\n"
      "assert r['test_tables'] == [{'name': 'test_confusion', 'labels': ['-1', '0', '<b>x</b>'],"
      " 'rows': [[50, 30, 20], [1, 8, 1], [0, 0, 5]]}], r['test_tables']\n"
      "assert r['test_metrics'] == j['test_metrics'], j\n"
      "assert r['test_tables'] == j['test_tables'], j\n";
  EXPECT_TRUE(PythonCheck(FormatHtmlReport(study), check));
}

TEST(HtmlReportTest, EverySectionHasItsIdAndAReadingGuide) {
  const std::string page = FormatHtmlReport(StudyWithTestResults());
  size_t last = 0;
  for (const char* id : {"history", "importance", "slices", "contour", "timeline", "parallel",
                         "curves", "table", "config"}) {
    const std::string open = std::string("<section id=\"") + id + "\">";
    ASSERT_EQ(Count(page, open), 1u) << id;
    EXPECT_GT(page.find(open), last) << id << " is out of order";
    last = page.find(open);
    const std::string section = Between(page, open, "</section>");
    EXPECT_NE(section.find("<p class=\"guide\">"), std::string::npos) << section;
  }
  // One file: the script inline, nothing fetched from the network.
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  EXPECT_NE(page.find("id=\"history-x\""), std::string::npos);
}

TEST(HtmlReportTest, EmbedsTheImportanceStartTimesAndFinishingOrder) {
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  StudyContents study = TestStudy();
  study.trials[0].start_time_s = 1800000000.5;
  StudyImportance importance;
  importance.trials = 1;
  importance.values = {{"lr", 0.75}, {"width", 0.25}};
  const std::string page = FormatHtmlReport(study, BuiltinTaskCatalog(), importance);
  const std::string check =
      std::string(kLoadStudy) +
      "i = r['importance']\n"
      "assert i['method'] == 'fanova' and i['trees'] == 64 and i['trials'] == 1, i\n"
      "assert i['importance'] == [{'name': 'lr', 'importance': 0.75},"
      " {'name': 'width', 'importance': 0.25}], i\n"
      "assert r['groups'] == 4 and r['start_times'] is True, r\n"
      "t = {x['trial_id']: x for x in r['trials']}\n"
      "assert [t[k]['order'] for k in (0, 1, 2)] == [0, 1, 2], t\n"
      "assert t[0]['start_time_s'] == 1800000000.5 and t[1]['start_time_s'] is None, t\n"
      "assert t[0]['group'] == 0, t\n";
  EXPECT_TRUE(PythonCheck(page, check)) << page;
}

// Three objectives: the page carries every objective of every trial and the front over all of
// them, and offers the choice of the two drawn (the first two at first); with two, no choice.
TEST(HtmlReportTest, SeveralObjectivesCarryEveryValueTheFrontAndAChoiceOfAxes) {
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  StudyContents study = TestStudy();
  study.layout.further_objectives = {{"val_loss", "minimize"}, {"epoch_time_s", "minimize"}};
  study.trials[0].further_objectives = {0.15, 3.0};
  study.trials[1].further_objectives = {0.5, 1.0};  // beaten by trial 0 on the first two only
  study.trials[2].further_objectives = {kNaN, 2.0};
  const std::string page = FormatHtmlReport(study);
  const std::string check =
      std::string(kLoadStudy) +
      "assert r['objectives'] == [{'name': 'val_accuracy', 'goal': 'maximize'},"
      " {'name': 'val_loss', 'goal': 'minimize'}, {'name': 'epoch_time_s', 'goal': 'minimize'}],"
      " r['objectives']\n"
      "t = {x['trial_id']: x for x in r['trials']}\n"
      "assert t[0]['further'] == [0.15, 3] and t[1]['further'] == [0.5, 1], t\n"
      "assert t[2]['further'] == [None, 2], t\n"
      "assert [t[k]['pareto'] for k in (0, 1, 2)] == [True, True, False], t\n";
  EXPECT_TRUE(PythonCheck(page, check)) << page;
  const std::string section = Between(page, "<section id=\"pareto\">", "</section>");
  EXPECT_NE(section.find("<select id=\"pareto-x\"><option value=\"0\" selected>val_accuracy"
                         "</option><option value=\"1\">val_loss</option><option value=\"2\">"
                         "epoch_time_s</option></select>"),
            std::string::npos)
      << section;
  EXPECT_NE(section.find("<select id=\"pareto-y\"><option value=\"0\">val_accuracy</option>"
                         "<option value=\"1\" selected>val_loss</option>"),
            std::string::npos)
      << section;
  EXPECT_NE(section.find("two of the 3 objectives"), std::string::npos) << section;

  study.layout.further_objectives.pop_back();
  for (TrialResult& trial : study.trials) trial.further_objectives.pop_back();
  const std::string two = Between(FormatHtmlReport(study), "<section id=\"pareto\">", "</section>");
  EXPECT_NE(two.find("val_accuracy against its val_loss"), std::string::npos) << two;
  EXPECT_NE(two.find("id=\"pareto-plot\""), std::string::npos) << two;
  EXPECT_EQ(two.find("<select"), std::string::npos) << two;
}

TEST(HtmlReportTest, ComparisonOverlaysStudiesAndWarnsAboutAnotherMetric) {
  StudyContents a = TestStudy();
  StudyContents b = TestStudy();
  b.trials.pop_back();
  StudyContents c = TestStudy();
  c.attributes.metric_name = "val_loss";
  c.attributes.metric_goal = "minimize";
  const std::string page = FormatComparisonHtml(
      {{"runs/a/study.h5", &a}, {"runs/<b>/study.h5", &b}, {"c.h5", &c}}, BuiltinTaskCatalog());
  EXPECT_EQ(Count(page, "<section id=\"comparison\">"), 1u) << page;
  EXPECT_NE(page.find("<script id=\"hpo-comparison\" type=\"application/json\">"),
            std::string::npos);
  EXPECT_NE(page.find("<td>runs/&lt;b&gt;/study.h5</td><td>random search</td>"), std::string::npos)
      << page;
  EXPECT_EQ(page.find("runs/<b>"), std::string::npos) << "the name must be escaped everywhere";
  // Epochs in all (3 + 1 + 2) and until the best trial (trial 0, the first: 3).
  EXPECT_NE(page.find("<td>0.85</td><td>6</td><td>3</td>"), std::string::npos) << page;
  EXPECT_NE(page.find("<p class=\"warning\">c.h5 tunes val_loss (minimize)"), std::string::npos)
      << page;
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  const std::string check =
      "import json, re, sys\n"
      "page = open(sys.argv[1]).read()\n"
      "m = re.search(r'<script id=\"hpo-comparison\" type=\"application/json\">(.*?)</script>',"
      " page, re.S)\n"
      "r = json.loads(m.group(1))\n"
      "assert r['metric'] == 'val_accuracy' and r['goal'] == 'maximize', r\n"
      "s = r['studies']\n"
      "assert [x['name'] for x in s] == ['runs/a/study.h5', 'runs/<b>/study.h5', 'c.h5'], s\n"
      "assert len(s[0]['trials']) == 3 and len(s[1]['trials']) == 2, s\n"
      "assert s[0]['trials'][1] == {'trial_id': 1, 'status': 'stopped', 'objective': 0.5,"
      " 'epochs': 1, 'duration_s': 1.5, 'group': 0, 'order': 1, 'start_time_s': None}, s\n";
  EXPECT_TRUE(PythonCheck(page, check)) << page;
}

}  // namespace
}  // namespace hpo
