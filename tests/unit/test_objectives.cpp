// Several objectives (sweep.metric as a list): the config's list form and its errors, Pareto
// dominance and ParEGO's scalarisation on hand-computed cases, the multi-objective bayes search
// against random and single-objective search on a toy problem, the searcher's replay on resume,
// the study's further objective columns, and the report's Pareto front.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/pareto.hpp"
#include "hpo/config.hpp"
#include "report/report.hpp"
#include "search/searcher.hpp"
#include "study/study_file.hpp"

namespace hpo {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string TwoObjectiveConfig(const std::string& method, const std::string& extra = "") {
  return "task: synthetic\n" + extra +
         "sweep:\n"
         "  method: " +
         method +
         "\n"
         "  run_cap: 8\n"
         "  metric:\n"
         "    - {name: val_loss, goal: minimize, target: 0.1}\n"
         "    - {name: val_accuracy, goal: maximize}\n"
         "  parameters:\n"
         "    lr: {values: [0.1, 0.01]}\n";
}

// ---- config ----

TEST(ObjectivesConfig, AListKeepsEveryObjectiveAndTheFirstIsTheMetric) {
  SweepConfig config;
  const Status status = ParseConfig(TwoObjectiveConfig("bayes"), "test.yaml", &config);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(config.sweep.objectives.size(), 2u);
  EXPECT_EQ(config.sweep.metric.name, "val_loss");
  EXPECT_EQ(config.sweep.metric.goal, Goal::kMinimize);
  ASSERT_TRUE(config.sweep.metric.target.has_value());
  EXPECT_DOUBLE_EQ(*config.sweep.metric.target, 0.1);
  EXPECT_EQ(config.sweep.objectives[1].name, "val_accuracy");
  EXPECT_EQ(config.sweep.objectives[1].goal, Goal::kMaximize);
}

TEST(ObjectivesConfig, AMappingIsTheOnlyObjective) {
  SweepConfig config;
  const Status status = ParseConfig(
      "task: synthetic\nsweep:\n  method: grid\n  metric: {name: val_accuracy, goal: maximize}\n"
      "  parameters:\n    lr: {values: [0.1]}\n",
      "test.yaml", &config);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(config.sweep.objectives.size(), 1u);
  EXPECT_EQ(config.sweep.objectives[0].name, "val_accuracy");
  EXPECT_EQ(config.sweep.metric.goal, Goal::kMaximize);
}

TEST(ObjectivesConfig, GridAndRandomAcceptSeveral) {
  for (const char* method : {"grid", "random"}) {
    SweepConfig config;
    const Status status = ParseConfig(TwoObjectiveConfig(method), "test.yaml", &config);
    EXPECT_TRUE(status.ok()) << method << ": " << status.message();
    EXPECT_EQ(config.sweep.objectives.size(), 2u) << method;
  }
}

struct BadObjectives {
  const char* name;
  std::string text;
  const char* message;
};

class ObjectivesConfigErrors : public ::testing::TestWithParam<BadObjectives> {};

TEST_P(ObjectivesConfigErrors, OneLineNamingFileLineAndKey) {
  SweepConfig config;
  const Status status = ParseConfig(GetParam().text, "test.yaml", &config);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message(), GetParam().message);
  EXPECT_EQ(status.message().find('\n'), std::string::npos);
}

std::string WithMetric(const std::string& metric, const std::string& extra = "") {
  return "task: synthetic\n" + extra + "sweep:\n  method: bayes\n  run_cap: 4\n  metric:\n" +
         metric + "  parameters:\n    lr: {min: 0.001, max: 0.1}\n";
}

INSTANTIATE_TEST_SUITE_P(
    Table, ObjectivesConfigErrors,
    ::testing::Values(
        BadObjectives{"EmptyList", WithMetric("    []\n"),
                      "test.yaml:5: sweep.metric: must be a {name, goal} mapping or a non-empty "
                      "list of them"},
        BadObjectives{
            "Duplicate",
            WithMetric("    - {name: val_loss}\n    - {name: val_loss, goal: maximize}\n"),
            "test.yaml:7: sweep.metric[1]: metric 'val_loss' is listed twice"},
        BadObjectives{"TargetOnSecond",
                      WithMetric("    - {name: val_loss}\n    - {name: val_accuracy, goal: "
                                 "maximize, target: 0.9}\n"),
                      "test.yaml:7: sweep.metric[1]: a target ends the sweep on the primary "
                      "objective (the first entry) only; drop it from 'val_accuracy'"},
        BadObjectives{"BadGoal",
                      WithMetric("    - {name: val_loss}\n    - {name: val_accuracy, goal: up}\n"),
                      "test.yaml:7: sweep.metric[1].goal: must be minimize or maximize, got 'up'"},
        BadObjectives{"UnknownMetric",
                      WithMetric("    - {name: val_loss}\n    - {name: f1, goal: maximize}\n"),
                      "test.yaml:7: sweep.metric[1].name: unknown metric 'f1'; task synthetic "
                      "reports train_loss, val_loss, val_accuracy, val_macro_f1, epoch_time_s"},
        BadObjectives{"NotAMapping", WithMetric("    - val_loss\n"),
                      "test.yaml:6: sweep.metric[0]: must be a mapping of keys to values"},
        BadObjectives{"CurvesModel",
                      WithMetric("    - {name: val_loss}\n    - {name: val_accuracy}\n",
                                 "search: {model: curves}\nepochs: 3\n"),
                      "test.yaml:2: search.model: curves predicts one metric's final value and "
                      "cannot search several objectives; use tpe or gp, or a single sweep.metric"}),
    [](const ::testing::TestParamInfo<BadObjectives>& info) { return info.param.name; });

// ---- Pareto dominance, hypervolume, ParEGO ----

TEST(Pareto, FrontOfAHandSet) {
  // Losses (lower is better in both): 0, 1 and 3 trade off; 2 is dominated by 1; 4 duplicates 1
  // (equal points are both on the front); 5 failed.
  const std::vector<std::vector<double>> points = {{1.0, 5.0}, {2.0, 2.0}, {3.0, 3.0},
                                                   {4.0, 1.0}, {2.0, 2.0}, {kNaN, 0.0}};
  EXPECT_EQ(ParetoFront(points), (std::vector<size_t>{0, 1, 3, 4}));
  EXPECT_TRUE(Dominates(points[1], points[2]));
  EXPECT_FALSE(Dominates(points[0], points[1]));
  EXPECT_FALSE(Dominates(points[1], points[4]));
  EXPECT_TRUE(Dominates(points[3], points[5]));
}

TEST(Pareto, HypervolumeOfAHandSet) {
  // Reference (5, 6): (1,5) adds 4x1, (2,2) adds 3x3, (4,1) adds 1x1; (3,3) is dominated, (6,0)
  // lies outside the reference box.
  const std::vector<std::vector<double>> points = {
      {1.0, 5.0}, {2.0, 2.0}, {3.0, 3.0}, {4.0, 1.0}, {6.0, 0.0}};
  EXPECT_DOUBLE_EQ(Hypervolume2d(points, {5.0, 6.0}), 4.0 + 9.0 + 1.0);
  EXPECT_DOUBLE_EQ(Hypervolume2d({}, {5.0, 6.0}), 0.0);
}

TEST(Pareto, NormalisedAugmentedChebyshevOfAHandCase) {
  const std::vector<std::vector<double>> normalised =
      NormaliseLosses({{1.0, 10.0}, {3.0, 30.0}, {2.0, 30.0}, {kNaN, 1.0}});
  EXPECT_EQ(normalised[0], (std::vector<double>{0.0, 0.0}));
  EXPECT_EQ(normalised[1], (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(normalised[2], (std::vector<double>{0.5, 1.0}));
  // max(0.25 * 0.5, 0.75 * 1) + 0.05 * (0.125 + 0.75)
  EXPECT_DOUBLE_EQ(AugmentedChebyshev(normalised[2], {0.25, 0.75}), 0.75 + 0.05 * 0.875);
  EXPECT_TRUE(std::isinf(AugmentedChebyshev(normalised[3], {0.25, 0.75})));
}

TEST(Pareto, ParegoWeightsAreOnTheSimplexAndReplayable) {
  const std::vector<double> weights = ParegoWeights(7, 12, 3);
  ASSERT_EQ(weights.size(), 3u);
  double sum = 0.0;
  for (double weight : weights) {
    EXPECT_GT(weight, 0.0);
    sum += weight;
  }
  EXPECT_NEAR(sum, 1.0, 1e-12);
  EXPECT_EQ(ParegoWeights(7, 12, 3), weights);
  EXPECT_NE(ParegoWeights(7, 13, 3), weights);
}

// ---- the multi-objective search ----

// A ZDT1-like problem on three [0, 1] parameters: f1 = x0, f2 = g (1 - sqrt(f1 / g)) with
// g = 1 + 9 mean(x1, x2); both minimised. The front is x1 = x2 = 0.
std::vector<double> Zdt(const Assignment& params) {
  const double x0 = ParamAsDouble(*FindParam(params, "x0"));
  const double g =
      1.0 +
      9.0 * (ParamAsDouble(*FindParam(params, "x1")) + ParamAsDouble(*FindParam(params, "x2"))) /
          2.0;
  return {x0, g * (1.0 - std::sqrt(x0 / g))};
}

SweepConfig ToyConfig(SearchMethod method, bool two_objectives, BayesModel model) {
  SweepConfig config;
  config.path = "toy.yaml";
  config.sweep.method = method;
  config.sweep.metric = {"f1", Goal::kMinimize, std::nullopt};
  config.sweep.objectives = {config.sweep.metric};
  if (two_objectives) config.sweep.objectives.push_back({"f2", Goal::kMinimize, std::nullopt});
  config.sweep.run_cap = 60;
  for (const char* name : {"x0", "x1", "x2"}) {
    ParameterSpec spec;
    spec.name = name;
    spec.distribution = Distribution::kUniform;
    spec.min = 0.0;
    spec.max = 1.0;
    config.sweep.parameters.push_back(spec);
  }
  config.search.model = model;
  config.execution.seed = 3;
  return config;
}

// The hypervolume (reference (1.1, 11)) of `trials` trials of `config`'s searcher on Zdt.
double ToyHypervolume(const SweepConfig& config, int64_t trials) {
  std::unique_ptr<Searcher> searcher;
  EXPECT_TRUE(MakeSearcher(config, &searcher).ok());
  std::vector<std::vector<double>> points;
  for (int64_t id = 0; id < trials; ++id) {
    const std::optional<Assignment> params = searcher->Suggest(id);
    EXPECT_TRUE(params.has_value());
    const std::vector<double> objectives = Zdt(*params);
    searcher->ObserveObjectives(id, *params, TrialStatus::kCompleted, objectives);
    points.push_back(objectives);
  }
  return Hypervolume2d(points, {1.1, 11.0});
}

TEST(MultiObjectiveSearch, ParegoBeatsRandomAndTheFirstObjectiveAlone) {
  for (BayesModel model : {BayesModel::kTpe, BayesModel::kGp}) {
    const double parego = ToyHypervolume(ToyConfig(SearchMethod::kBayes, true, model), 60);
    const double random = ToyHypervolume(ToyConfig(SearchMethod::kRandom, true, model), 60);
    // The same search seeing only f1 (what it would do if the second objective were ignored).
    const double first_only = ToyHypervolume(ToyConfig(SearchMethod::kBayes, false, model), 60);
    EXPECT_GT(parego, random * 1.02) << "model " << static_cast<int>(model);
    EXPECT_GT(parego, first_only * 1.02) << "model " << static_cast<int>(model);
  }
}

// Feeds trials 0..n-1 of Zdt to `searcher` in `order` (suggesting each first).
std::string ObserveInOrder(const SweepConfig& config, const std::vector<int64_t>& order,
                           std::unique_ptr<Searcher>* out) {
  std::unique_ptr<Searcher> reference;
  EXPECT_TRUE(MakeSearcher(config, &reference).ok());
  std::vector<Assignment> params;
  for (int64_t id = 0; id < static_cast<int64_t>(order.size()); ++id) {
    params.push_back(*reference->Suggest(id));
  }
  EXPECT_TRUE(MakeSearcher(config, out).ok());
  for (int64_t id : order) {
    (*out)->ObservePending(id, params[static_cast<size_t>(id)]);
  }
  for (int64_t id : order) {
    (*out)->ObserveObjectives(id, params[static_cast<size_t>(id)], TrialStatus::kCompleted,
                              Zdt(params[static_cast<size_t>(id)]));
  }
  return (*out)->SaveState();
}

TEST(MultiObjectiveSearch, ReplayOnResumeGivesTheSameState) {
  const SweepConfig config = ToyConfig(SearchMethod::kBayes, true, BayesModel::kTpe);
  std::unique_ptr<Searcher> live;
  std::unique_ptr<Searcher> replayed;
  std::vector<int64_t> forward;
  for (int64_t id = 0; id < 15; ++id) forward.push_back(id);
  const std::vector<int64_t> backward(forward.rbegin(), forward.rend());
  const std::string state = ObserveInOrder(config, forward, &live);
  EXPECT_EQ(ObserveInOrder(config, backward, &replayed), state);
  const Assignment next = *live->Suggest(15);
  const Assignment next_replayed = *replayed->Suggest(15);
  ASSERT_EQ(next.size(), next_replayed.size());
  for (size_t p = 0; p < next.size(); ++p) EXPECT_EQ(next[p].value, next_replayed[p].value);
  // The state holds the second objective: another f2 for one trial gives another state.
  std::unique_ptr<Searcher> other;
  ASSERT_TRUE(MakeSearcher(config, &other).ok());
  ASSERT_TRUE(other->RestoreState(state).ok());
  const Assignment params = *other->Suggest(15);
  other->ObserveObjectives(3, params, TrialStatus::kCompleted, {0.5, 99.0});
  EXPECT_NE(other->SaveState(), state);
  // A single-objective searcher refuses the state.
  std::unique_ptr<Searcher> single;
  ASSERT_TRUE(MakeSearcher(ToyConfig(SearchMethod::kBayes, false, BayesModel::kTpe), &single).ok());
  EXPECT_FALSE(single->RestoreState(state).ok());
  EXPECT_NE(single->ConfigFingerprint(), live->ConfigFingerprint());
}

// ---- the study ----

StudyLayout TwoObjectiveLayout() {
  StudyLayout layout;
  layout.params = {{"lr", ParamType::kFloat, 0}, {"objective:odd", ParamType::kInt, 0}};
  layout.metric_names = {"val_loss", "val/accuracy"};
  layout.further_objectives = {{"val/accuracy", "maximize"}};
  return layout;
}

TrialResult Row(int64_t id, double loss, double accuracy) {
  TrialResult trial;
  trial.trial_id = id;
  trial.status = std::isnan(loss) ? TrialStatus::kFailed : TrialStatus::kCompleted;
  trial.objective = loss;
  trial.further_objectives = {accuracy};
  trial.params = {{"lr", 0.1 * static_cast<double>(id + 1)}, {"objective:odd", int64_t{id % 2}}};
  trial.epochs = 1;
  trial.group = 0;
  trial.curve = {{1, {loss, accuracy}}};
  return trial;
}

class ObjectivesStudy : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = std::filesystem::temp_directory_path() /
              ("hpo_objectives_" + std::to_string(::getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(folder_);
    std::filesystem::create_directories(folder_);
    path_ = (folder_ / "study.h5").string();
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }

  // Trials: 0 (0.5, 0.95), 1 (0.3, 0.70), 2 (0.4, 0.90), 3 (0.6, 0.60: dominated), 4 failed.
  void WriteStudy() {
    StudyAttributes attributes;
    attributes.metric_name = "val_loss";
    attributes.metric_goal = "minimize";
    std::unique_ptr<StudyWriter> writer;
    ASSERT_TRUE(StudyWriter::Create(path_, TwoObjectiveLayout(), attributes, &writer).ok());
    for (const TrialResult& row : {Row(0, 0.5, 0.95), Row(1, 0.3, 0.7), Row(2, 0.4, 0.9)}) {
      ASSERT_TRUE(writer->Append(row).ok());
    }
    ASSERT_TRUE(writer->Close().ok());
    writer.reset();
    // Resume: reopen and append.
    const Status opened = StudyWriter::Open(path_, TwoObjectiveLayout(), &writer);
    ASSERT_TRUE(opened.ok()) << opened.message();
    ASSERT_TRUE(writer->Append(Row(3, 0.6, 0.6)).ok());
    ASSERT_TRUE(writer->Append(Row(4, kNaN, kNaN)).ok());
    ASSERT_TRUE(writer->Close().ok());
  }

  std::filesystem::path folder_;
  std::string path_;
};

TEST_F(ObjectivesStudy, FurtherObjectivesRoundTrip) {
  WriteStudy();
  StudyContents study;
  ASSERT_TRUE(ReadStudy(path_, &study).ok());
  ASSERT_EQ(study.layout.further_objectives.size(), 1u);
  EXPECT_EQ(study.layout.further_objectives[0].metric, "val/accuracy");
  EXPECT_EQ(study.layout.further_objectives[0].goal, "maximize");
  ASSERT_EQ(study.layout.params.size(), 2u);
  EXPECT_EQ(study.layout.params[1].name, "objective:odd");  // stored as param:objective:odd
  ASSERT_EQ(study.trials.size(), 5u);
  for (int64_t id = 0; id < 4; ++id) {
    const TrialResult& trial = study.trials[static_cast<size_t>(id)];
    const TrialResult expected = Row(id, trial.objective, trial.further_objectives.at(0));
    ASSERT_EQ(trial.params.size(), expected.params.size());
    for (size_t p = 0; p < trial.params.size(); ++p) {
      EXPECT_EQ(trial.params[p].name, expected.params[p].name);
      EXPECT_EQ(trial.params[p].value, expected.params[p].value);
    }
  }
  EXPECT_DOUBLE_EQ(study.trials[2].further_objectives.at(0), 0.9);
  EXPECT_DOUBLE_EQ(study.trials[3].further_objectives.at(0), 0.6);
  EXPECT_TRUE(std::isnan(study.trials[4].further_objectives.at(0)));
  // A layout without the column is another study.
  StudyLayout single = TwoObjectiveLayout();
  single.further_objectives.clear();
  std::unique_ptr<StudyWriter> writer;
  EXPECT_FALSE(StudyWriter::Open(path_, single, &writer).ok());
}

TEST_F(ObjectivesStudy, ReportListsTheFrontFirst) {
  WriteStudy();
  StudyContents study;
  ASSERT_TRUE(ReadStudy(path_, &study).ok());
  ReportOptions options;
  const std::string table = FormatReport(study, options);
  EXPECT_NE(table.find("Pareto front: 3 trials"), std::string::npos) << table;
  // The front (1, 2, 0 by val_loss), marked, then trial 3, then the failed one.
  const size_t one = table.find("\n   1      1  *");
  const size_t two = table.find("\n   2      2  *");
  const size_t three = table.find("\n   3      0  *");
  const size_t four = table.find("\n   4      3   ");
  EXPECT_NE(one, std::string::npos) << table;
  EXPECT_LT(one, two);
  EXPECT_LT(two, three);
  EXPECT_LT(three, four);
  options.format = ReportFormat::kJson;
  const std::string json = FormatReport(study, options);
  EXPECT_NE(json.find("\"pareto_front\": [1, 2, 0]"), std::string::npos) << json;
  EXPECT_NE(json.find("\"objectives\": [{\"name\": \"val_loss\", \"goal\": \"minimize\"}, "
                      "{\"name\": \"val/accuracy\", \"goal\": \"maximize\"}]"),
            std::string::npos)
      << json;
  const std::string html = FormatHtmlReport(study);
  EXPECT_NE(html.find("<section id=\"pareto\">"), std::string::npos);
  EXPECT_NE(html.find("\"further\": [0.9], \"pareto\": true"), std::string::npos);
}

}  // namespace
}  // namespace hpo
