// fANOVA importance (core/src/report/importance.*): the dominant parameter ranks first,
// importances sum to 1, the result is deterministic, categorical parameters take part, and a
// study's constants, failed and stopped trials are left out. Agreement with Optuna's
// FanovaImportanceEvaluator is checked by tests/browser/check_importance_optuna.py. The importance
// is stored in a study named by its file or by its output folder.
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "report/importance.hpp"

namespace hpo {
namespace {

TEST(FanovaImportances, DominantNumericParameterFirstAndSumIsOne) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  for (int i = 0; i < 200; ++i) {
    const double a = unit(rng);
    const double b = unit(rng);
    const double c = unit(rng);
    rows.push_back({a, b, c});
    y.push_back(10.0 * a * a + 1.0 * b);  // c does nothing
  }
  const std::vector<FanovaParam> params = {
      {"a", 0, 0.0, 1.0}, {"b", 0, 0.0, 1.0}, {"c", 0, 0.0, 1.0}};
  std::vector<double> importances;
  ASSERT_TRUE(FanovaImportances(params, rows, y, FanovaOptions(), &importances));
  ASSERT_EQ(importances.size(), 3u);
  EXPECT_NEAR(importances[0] + importances[1] + importances[2], 1.0, 1e-9);
  EXPECT_GT(importances[0], 0.8);
  EXPECT_GT(importances[1], importances[2]);
  EXPECT_LT(importances[2], 0.05);
  std::vector<double> again;
  ASSERT_TRUE(FanovaImportances(params, rows, y, FanovaOptions(), &again));
  EXPECT_EQ(importances, again);  // deterministic for a seed
}

TEST(FanovaImportances, CategoricalParameterIsOneHotAndCanDominate) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  const double offsets[] = {0.0, 3.0, 1.0};
  for (int i = 0; i < 150; ++i) {
    const int k = static_cast<int>(rng() % 3);
    const double x = unit(rng);
    rows.push_back({static_cast<double>(k), x});
    y.push_back(offsets[k] + 0.2 * x);
  }
  const std::vector<FanovaParam> params = {{"optimizer", 3, 0.0, 1.0}, {"x", 0, 0.0, 1.0}};
  std::vector<double> importances;
  ASSERT_TRUE(FanovaImportances(params, rows, y, FanovaOptions(), &importances));
  EXPECT_GT(importances[0], importances[1]);
  EXPECT_GT(importances[0], 0.8);
}

TEST(FanovaImportances, ConstantObjectiveOrTooFewRowsHasNone) {
  std::vector<double> importances;
  const std::vector<FanovaParam> params = {{"a", 0, 0.0, 1.0}};
  EXPECT_FALSE(FanovaImportances(params, {{0.1}, {0.5}, {0.9}}, {1.0, 1.0, 1.0}, FanovaOptions(),
                                 &importances));
  EXPECT_FALSE(FanovaImportances(params, {{0.1}}, {1.0}, FanovaOptions(), &importances));
  EXPECT_TRUE(importances.empty());
}

StudyContents Study() {
  StudyContents study;
  study.attributes.config =
      "sweep:\n  method: random\n  run_cap: 60\n  metric: {name: val_loss, goal: minimize}\n"
      "  parameters:\n"
      "    lr: {min: 0.0001, max: 0.1, distribution: log_uniform_values}\n"
      "    width: {min: 8, max: 64}\n"
      "    optimizer: {values: [sgd, adam]}\n"
      "    dropout: {value: 0.25}\n"
      "task: synthetic\nepochs: 2\n";
  study.attributes.metric_name = "val_loss";
  study.attributes.metric_goal = "minimize";
  study.layout.params = {{"lr", ParamType::kFloat, 0},
                         {"width", ParamType::kInt, 0},
                         {"optimizer", ParamType::kString, 8},
                         {"dropout", ParamType::kFloat, 0}};
  study.layout.metric_names = {"val_loss"};
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int64_t id = 0; id < 60; ++id) {
    TrialResult trial;
    trial.trial_id = id;
    const double lr = 0.0001 * std::pow(1000.0, unit(rng));
    const int64_t width = 8 + static_cast<int64_t>(rng() % 57);
    const std::string optimizer = rng() % 2 == 0 ? "sgd" : "adam";
    trial.params = {{"lr", lr}, {"width", width}, {"optimizer", optimizer}, {"dropout", 0.25}};
    trial.status = id % 10 == 9 ? TrialStatus::kStopped : TrialStatus::kCompleted;
    trial.objective =
        100.0 * lr + 0.001 * static_cast<double>(width) + (optimizer == "adam" ? 0.01 : 0.0);
    if (id % 10 == 9) trial.objective = 1e6;  // stopped trials do not count
    if (id == 5) {
      trial.status = TrialStatus::kFailed;
      trial.objective = std::nan("");
    }
    study.trials.push_back(std::move(trial));
  }
  return study;
}

TEST(StudyImportance, RanksTheStudysVaryingParametersOverCompletedTrials) {
  const StudyImportance importance = ComputeStudyImportance(Study(), BuiltinTaskCatalog());
  ASSERT_EQ(importance.values.size(), 3u) << importance.note;  // dropout is a constant
  EXPECT_EQ(importance.values[0].first, "lr");
  EXPECT_EQ(importance.trials, 53);  // 60 - 6 stopped - 1 failed
  EXPECT_GE(importance.values[0].second, importance.values[1].second);
  EXPECT_GE(importance.values[1].second, importance.values[2].second);
  const std::string json = StudyImportanceJson(importance);
  EXPECT_NE(json.find("\"method\": \"fanova\", \"trees\": 64, \"max_depth\": 64, \"seed\": 0, "
                      "\"trials\": 53, \"importance\": [{\"name\": \"lr\", \"importance\": "),
            std::string::npos)
      << json;
}

TEST(StudyImportance, SaysWhyWhenThereIsNone) {
  StudyContents study = Study();
  study.trials.resize(1);
  const StudyImportance importance = ComputeStudyImportance(study, BuiltinTaskCatalog());
  EXPECT_TRUE(importance.values.empty());
  EXPECT_NE(importance.note.find("at least 2 completed trials"), std::string::npos)
      << importance.note;
  EXPECT_NE(StudyImportanceJson(importance).find("\"importance\": []"), std::string::npos);
}

TEST(StudyImportance, AConditionalParameterLeavesNoTrialOut) {
  // momentum exists only with sgd; the optimizer decides the objective. Fitted on the trials
  // where every parameter is present (sgd only), the optimizer would not vary at all.
  StudyContents study;
  study.attributes.config =
      "sweep:\n  method: random\n  run_cap: 80\n  metric: {name: val_loss, goal: minimize}\n"
      "  parameters:\n"
      "    lr: {min: 0.001, max: 0.1}\n"
      "    optimizer: {values: [sgd, adam]}\n"
      "    momentum: {min: 0.5, max: 0.95}\n"
      "conditions:\n  momentum: {optimizer: [sgd]}\n"
      "task: synthetic\nepochs: 2\n";
  study.attributes.metric_name = "val_loss";
  study.attributes.metric_goal = "minimize";
  study.layout.params = {{"lr", ParamType::kFloat, 0},
                         {"optimizer", ParamType::kString, 8},
                         {"momentum", ParamType::kFloat, 0}};
  study.layout.metric_names = {"val_loss"};
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int64_t id = 0; id < 80; ++id) {
    TrialResult trial;
    trial.trial_id = id;
    const double lr = 0.001 + 0.099 * unit(rng);
    const bool sgd = rng() % 2 == 0;
    trial.params = {{"lr", lr}, {"optimizer", std::string(sgd ? "sgd" : "adam")}};
    trial.objective = (sgd ? 1.0 : 0.0) + 0.5 * lr;
    if (sgd) {
      const double momentum = 0.5 + 0.45 * unit(rng);
      trial.params.push_back({"momentum", momentum});
      trial.objective += 0.05 * momentum;
    }
    trial.status = TrialStatus::kCompleted;
    study.trials.push_back(std::move(trial));
  }
  const StudyImportance importance = ComputeStudyImportance(study, BuiltinTaskCatalog());
  EXPECT_EQ(importance.trials, 80);
  ASSERT_EQ(importance.values.size(), 3u) << importance.note;
  EXPECT_EQ(importance.values[0].first, "optimizer");
  EXPECT_GT(importance.values[0].second, 0.5);
}

// `hpo report OUTPUT --html` stores the importance in OUTPUT/study.h5 as `hpo report
// OUTPUT/study.h5 --html` does (issue 52: the folder was opened as if it were the file).
TEST(StudyImportance, IsStoredInTheStudyOfAnOutputFolder) {
  std::string folder = testing::TempDir() + "hpo_importance_XXXXXX";
  ASSERT_NE(mkdtemp(folder.data()), nullptr);
  const StudyContents written = Study();
  {
    std::unique_ptr<StudyWriter> writer;
    ASSERT_TRUE(
        StudyWriter::Create(folder + "/study.h5", written.layout, written.attributes, &writer)
            .ok());
    for (const TrialResult& trial : written.trials) ASSERT_TRUE(writer->Stage(trial).ok());
    ASSERT_TRUE(writer->Publish({}).ok());
    ASSERT_TRUE(writer->Close().ok());
  }
  StudyContents study;
  ASSERT_TRUE(ReadStudy(StudyPathOf(folder), &study).ok());
  const StudyImportance importance = ComputeStudyImportance(study, BuiltinTaskCatalog());
  const Status stored = StoreStudyImportance(folder, study, importance);
  EXPECT_TRUE(stored.ok()) << stored.message();
  ASSERT_TRUE(ReadStudy(folder + "/study.h5", &study).ok());
  const auto attribute = study.extra_attributes.find(kImportanceAttribute);
  ASSERT_NE(attribute, study.extra_attributes.end());
  EXPECT_TRUE(attribute->second == StudyAttribute(StudyImportanceJson(importance)));
  // Stored already: the file form finds it there and leaves the study as it is.
  EXPECT_TRUE(StoreStudyImportance(folder + "/study.h5", study, importance).ok());
  std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace hpo
