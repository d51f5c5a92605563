// Conditional parameters (`conditions:` beside `sweep:`): the config's conditions and their bad
// input, every searcher's suggestions against the tree on hand-computed cases, the model-based
// searchers learning inside a branch, and the study file marking absent parameters.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/param.hpp"
#include "report/report.hpp"
#include "search/conditions.hpp"
#include "search/searcher.hpp"
#include "searcher_test_support.hpp"
#include "study/study_file.hpp"

namespace hpo {
namespace {

using test_support::Choices;
using test_support::MakeConfig;
using test_support::MakeOrDie;
using test_support::Parameter;

// ---- config ----

constexpr char kConditionalConfig[] = R"(task: synthetic
epochs: 2
sweep:
  method: random
  run_cap: 4
  metric: {name: val_loss, goal: minimize}
  parameters:
    momentum: {min: 0.0, max: 0.99}
    batch_size: {values: [32, 64]}
    optimizer: {values: [sgd, adam]}
    lr: {values: [0.1, 0.01]}
conditions:
  momentum: {batch_size: [64]}
  batch_size: {optimizer: sgd}
)";

ParameterCondition ConditionOf(const SweepConfig& config, const std::string& name) {
  for (const ParameterSpec& parameter : config.sweep.parameters) {
    if (parameter.name == name && parameter.condition) return *parameter.condition;
  }
  ADD_FAILURE() << name << " has no condition";
  return {};
}

TEST(ConditionalConfigTest, ParsesAChainOfConditionsWithTypedValues) {
  SweepConfig config;
  const Status status = ParseConfig(kConditionalConfig, "test.yaml", &config);
  ASSERT_TRUE(status.ok()) << status.message();
  const ParameterCondition momentum = ConditionOf(config, "momentum");
  EXPECT_EQ(momentum.parent, "batch_size");
  EXPECT_EQ(momentum.values, std::vector<ParamValue>{int64_t{64}});
  EXPECT_EQ(momentum.line, 13);
  const ParameterCondition batch_size = ConditionOf(config, "batch_size");
  EXPECT_EQ(batch_size.parent, "optimizer");
  EXPECT_EQ(batch_size.values, std::vector<ParamValue>{std::string("sgd")});
  EXPECT_FALSE(config.sweep.parameters[2].condition.has_value());  // optimizer
  // Parents first: optimizer, then batch_size, then momentum, lr where it was.
  EXPECT_EQ(ParentsFirstOrder(config.sweep.parameters), (std::vector<size_t>{2, 1, 0, 3}));
}

struct BadConditions {
  const char* name;
  const char* conditions;  // the `conditions:` section, after kConditionalConfig's sweep
  const char* expected;
};

const BadConditions kBadConditions[] = {
    {"UnknownChild", "conditions:\n  nesterov: {optimizer: [sgd]}\n",
     "test.yaml:13: conditions.nesterov: not a parameter of sweep.parameters (it has: momentum, "
     "batch_size, optimizer, lr)"},
    {"UnknownParent", "conditions:\n  momentum: {solver: [sgd]}\n",
     "test.yaml:13: conditions.momentum.solver: the parent 'solver' is not a parameter of "
     "sweep.parameters"},
    {"ValueNotOfParent", "conditions:\n  momentum:\n    optimizer: [sgd, rmsprop]\n",
     "test.yaml:14: conditions.momentum.optimizer[1]: 'rmsprop' is not a value of 'optimizer' "
     "(it takes: sgd, adam)"},
    {"SelfCycle", "conditions:\n  batch_size: {batch_size: [32]}\n",
     "test.yaml:13: conditions.batch_size.batch_size: a parameter cannot be conditioned on itself"},
    {"TwoCycle", "conditions:\n  optimizer: {batch_size: [32]}\n  batch_size: {optimizer: [sgd]}\n",
     "test.yaml:13: conditions.optimizer: the conditions form a cycle: optimizer -> batch_size -> "
     "optimizer"},
    {"ParentNotCategorical", "conditions:\n  lr: {momentum: [0.5]}\n",
     "test.yaml:13: conditions.lr.momentum: the parent 'momentum' must be categorical (`values`), "
     "it is uniform"},
    {"NotAMapping", "conditions:\n  momentum: [optimizer]\n",
     "test.yaml:13: conditions.momentum: must map one parent parameter"},
};

void PrintTo(const BadConditions& bad, std::ostream* out) { *out << bad.name; }

class BadConditionsTest : public testing::TestWithParam<BadConditions> {};

TEST_P(BadConditionsTest, IsOneBadInputLineNamingFileLineAndKey) {
  std::string text = kConditionalConfig;
  text = text.substr(0, text.find("conditions:")) + GetParam().conditions;
  SweepConfig config;
  const Status status = ParseConfig(text, "test.yaml", &config);
  ASSERT_EQ(status.code(), Status::Code::kBadInput) << "accepted:\n" << text;
  EXPECT_NE(status.message().find(GetParam().expected), std::string::npos)
      << "message:  " << status.message() << "\nexpected: " << GetParam().expected;
  EXPECT_EQ(status.message().find('\n'), std::string::npos) << status.message();
}

INSTANTIATE_TEST_SUITE_P(Table, BadConditionsTest, testing::ValuesIn(kBadConditions),
                         [](const testing::TestParamInfo<BadConditions>& info) {
                           return std::string(info.param.name);
                         });

TEST(ConditionalConfigTest, RefusesTheStudyFilesAbsentMarksAsValues) {
  std::string text = kConditionalConfig;
  text.replace(text.find("[sgd, adam]"), 11, "['', adam]");
  SweepConfig config;
  const Status status = ParseConfig(text, "test.yaml", &config);
  ASSERT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find("test.yaml:10: sweep.parameters.optimizer.values[0]: must not "
                                  "be empty"),
            std::string::npos)
      << status.message();
}

// ---- searchers ----

// optimizer in {sgd, adam}; momentum in [0, 1] only with sgd; lr always.
std::vector<ParameterSpec> SgdMomentumSpace() {
  std::vector<ParameterSpec> parameters = {
      Choices("optimizer", ParamType::kString, {std::string("sgd"), std::string("adam")}),
      Parameter("momentum", Distribution::kUniform, 0.0, 1.0),
      Parameter("lr", Distribution::kLogUniformValues, 1e-4, 1e-1),
  };
  parameters[1].condition = ParameterCondition{"optimizer", {std::string("sgd")}, 0};
  return parameters;
}

bool IsSgd(const Assignment& params) {
  const ParamValue* optimizer = FindParam(params, "optimizer");
  return optimizer != nullptr && *optimizer == ParamValue(std::string("sgd"));
}

// Every suggestion has optimizer and lr, and momentum exactly when optimizer is sgd.
void ExpectRespectsTree(const Assignment& params) {
  ASSERT_NE(FindParam(params, "optimizer"), nullptr);
  ASSERT_NE(FindParam(params, "lr"), nullptr);
  EXPECT_EQ(FindParam(params, "momentum") != nullptr, IsSgd(params))
      << "optimizer " << FormatParamValue(*FindParam(params, "optimizer")) << ", " << params.size()
      << " params";
  EXPECT_EQ(params.size(), IsSgd(params) ? 3u : 2u);
}

TEST(ConditionalSearchTest, RandomAndSobolEmitExactlyTheActiveParameters) {
  for (const RandomSampler sampler : {RandomSampler::kIndependent, RandomSampler::kSobol}) {
    SweepConfig config = MakeConfig(SearchMethod::kRandom, SgdMomentumSpace(), 7);
    config.search.sampler = sampler;
    const std::unique_ptr<Searcher> searcher = MakeOrDie(config);
    int sgd = 0;
    for (int64_t id = 0; id < 64; ++id) {
      const std::optional<Assignment> params = searcher->Suggest(id);
      ASSERT_TRUE(params.has_value());
      ExpectRespectsTree(*params);
      sgd += IsSgd(*params) ? 1 : 0;
    }
    EXPECT_GT(sgd, 16);  // both branches are drawn
    EXPECT_LT(sgd, 48);
  }
}

TEST(ConditionalSearchTest, SobolPointsOfTheActiveParametersAreThoseWithoutConditions) {
  SweepConfig conditional = MakeConfig(SearchMethod::kRandom, SgdMomentumSpace(), 3);
  conditional.search.sampler = RandomSampler::kSobol;
  SweepConfig plain = conditional;
  plain.sweep.parameters[1].condition.reset();
  const std::unique_ptr<Searcher> with = MakeOrDie(conditional);
  const std::unique_ptr<Searcher> without = MakeOrDie(plain);
  for (int64_t id = 0; id < 16; ++id) {
    const Assignment a = *with->Suggest(id);
    const Assignment b = *without->Suggest(id);
    for (const NamedValue& entry : a) EXPECT_EQ(entry.value, *FindParam(b, entry.name));
  }
}

// The grid over a tree, in config order batch, optimizer, kind, beta: kind only with sgd, beta
// only with kind nesterov.
TEST(ConditionalSearchTest, GridEnumeratesOnlyTheActiveBranches) {
  std::vector<ParameterSpec> parameters = {
      Choices("batch", ParamType::kInt, {int64_t{32}, int64_t{64}}),
      Choices("optimizer", ParamType::kString, {std::string("sgd"), std::string("adam")}),
      Choices("kind", ParamType::kString, {std::string("plain"), std::string("nesterov")}),
      Parameter("beta", Distribution::kIntUniform, 1, 3),
  };
  parameters[2].condition = ParameterCondition{"optimizer", {std::string("sgd")}, 0};
  parameters[3].condition = ParameterCondition{"kind", {std::string("nesterov")}, 0};
  const std::unique_ptr<Searcher> searcher =
      MakeOrDie(MakeConfig(SearchMethod::kGrid, parameters, 1));
  ASSERT_EQ(searcher->SpaceSize(), 10);  // 2 batches x (adam + sgd/plain + sgd/nesterov x 3)
  std::vector<std::string> points;
  for (int64_t id = 0; id < 10; ++id) {
    std::string text;
    const std::optional<Assignment> point = searcher->Suggest(id);
    ASSERT_TRUE(point.has_value());
    for (const NamedValue& entry : *point) {
      text += (text.empty() ? "" : " ") + entry.name + "=" + FormatParamValue(entry.value);
    }
    points.push_back(text);
  }
  const std::vector<std::string> expected = {
      "batch=32 optimizer=sgd kind=plain",
      "batch=32 optimizer=sgd kind=nesterov beta=1",
      "batch=32 optimizer=sgd kind=nesterov beta=2",
      "batch=32 optimizer=sgd kind=nesterov beta=3",
      "batch=32 optimizer=adam",
      "batch=64 optimizer=sgd kind=plain",
      "batch=64 optimizer=sgd kind=nesterov beta=1",
      "batch=64 optimizer=sgd kind=nesterov beta=2",
      "batch=64 optimizer=sgd kind=nesterov beta=3",
      "batch=64 optimizer=adam",
  };
  EXPECT_EQ(points, expected);
  EXPECT_FALSE(searcher->Suggest(10).has_value());
}

// Loss: sgd with momentum near 0.9 is best; adam is a flat 0.3; lr does not matter.
double ToyLoss(const Assignment& params) {
  if (!IsSgd(params)) return 0.3;
  const double momentum = ParamAsDouble(*FindParam(params, "momentum"));
  return (momentum - 0.9) * (momentum - 0.9);
}

// How many of `trials` model-based suggestions after `startup` random ones are sgd with momentum
// within 0.1 of 0.9 (random search: one in ten).
int GoodSuggestions(SweepConfig config, int64_t startup, int64_t trials) {
  config.sweep.method = SearchMethod::kBayes;
  config.search.startup_trials = startup;
  const std::unique_ptr<Searcher> searcher = MakeOrDie(config);
  int good = 0;
  for (int64_t id = 0; id < startup + trials; ++id) {
    const Assignment params = *searcher->Suggest(id);
    ExpectRespectsTree(params);
    if (id >= startup && IsSgd(params) &&
        std::abs(ParamAsDouble(*FindParam(params, "momentum")) - 0.9) < 0.1) {
      ++good;
    }
    searcher->Observe(id, params, TrialStatus::kCompleted, ToyLoss(params));
  }
  return good;
}

TEST(ConditionalSearchTest, ModelBasedSearchersLearnInsideTheBranch) {
  for (const BayesModel model : {BayesModel::kTpe, BayesModel::kTpeIndependent, BayesModel::kGp}) {
    SCOPED_TRACE(static_cast<int>(model));
    SweepConfig config = MakeConfig(SearchMethod::kBayes, SgdMomentumSpace(), 5);
    config.search.model = model;
    const int good = GoodSuggestions(config, 10, 30);
    EXPECT_GE(good, 12) << "of 30 (random: about 3)";
  }
}

TEST(ConditionalSearchTest, ModelBasedStateRoundTripsAndNamesTheConditions) {
  SweepConfig config = MakeConfig(SearchMethod::kBayes, SgdMomentumSpace(), 9);
  config.search.startup_trials = 4;
  const std::unique_ptr<Searcher> searcher = MakeOrDie(config);
  for (int64_t id = 0; id < 12; ++id) {
    const Assignment params = *searcher->Suggest(id);
    searcher->Observe(id, params, TrialStatus::kCompleted, ToyLoss(params));
  }
  const std::unique_ptr<Searcher> restored = MakeOrDie(config);
  ASSERT_TRUE(restored->RestoreState(searcher->SaveState()).ok());
  for (int64_t id = 12; id < 16; ++id) {
    const Assignment expected = *searcher->Suggest(id);
    const Assignment actual = *restored->Suggest(id);
    ASSERT_EQ(expected.size(), actual.size());
    for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(expected[i].value, actual[i].value);
  }
  SweepConfig plain = config;
  plain.sweep.parameters[1].condition.reset();
  EXPECT_EQ(MakeOrDie(plain)->RestoreState(searcher->SaveState()).code(), Status::Code::kBadInput);
}

// ---- study ----

class ConditionalStudyTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "hpo_conditional_study";
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = dir_ + "/study.h5";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_;
  std::string path_;
};

TrialResult Trial(int64_t id, Assignment params) {
  TrialResult trial;
  trial.trial_id = id;
  trial.status = TrialStatus::kCompleted;
  trial.objective = 0.25 * static_cast<double>(id + 1);
  trial.params = std::move(params);
  trial.epochs = 1;
  trial.group = 0;
  trial.curve.push_back({1, {trial.objective}});
  return trial;
}

TEST_F(ConditionalStudyTest, AbsentParametersReadBackAbsentAndShowAsDash) {
  StudyLayout layout;
  layout.params = {{"optimizer", ParamType::kString, 5, false},
                   {"momentum", ParamType::kFloat, 0, true},
                   {"depth", ParamType::kInt, 0, true},
                   {"kind", ParamType::kString, 9, true}};
  layout.metric_names = {"val_loss"};
  StudyAttributes attributes;
  attributes.config = "sweep: {}\n";
  attributes.metric_name = "val_loss";
  attributes.metric_goal = "minimize";
  attributes.world_size = 1;
  std::unique_ptr<StudyWriter> writer;
  ASSERT_TRUE(StudyWriter::Create(path_, layout, attributes, &writer).ok());
  const Assignment sgd = {{"optimizer", std::string("sgd")},
                          {"momentum", 0.9},
                          {"depth", int64_t{0}},
                          {"kind", std::string("nesterov")}};
  const Assignment adam = {{"optimizer", std::string("adam")}};
  ASSERT_TRUE(writer->Append(Trial(0, sgd)).ok());
  ASSERT_TRUE(writer->Append(Trial(1, adam)).ok());
  // A parameter without a condition may not be absent.
  EXPECT_EQ(writer->Append(Trial(2, {{"momentum", 0.5}})).code(), Status::Code::kFailure);
  ASSERT_TRUE(writer->Close().ok());

  StudyContents study;
  ASSERT_TRUE(ReadStudy(path_, &study).ok());
  ASSERT_EQ(study.trials.size(), 2u);
  ASSERT_EQ(study.trials[0].params.size(), 4u);
  for (size_t i = 0; i < sgd.size(); ++i) EXPECT_EQ(study.trials[0].params[i].value, sgd[i].value);
  ASSERT_EQ(study.trials[1].params.size(), 1u);  // momentum, depth and kind absent, not 0 or ""
  EXPECT_EQ(study.trials[1].params[0].value, ParamValue(std::string("adam")));

  ReportOptions options;
  options.format = ReportFormat::kCsv;
  const std::string csv = FormatReport(study, options);
  EXPECT_NE(csv.find(",adam,,,,"), std::string::npos) << csv;
  options.format = ReportFormat::kTable;
  const std::string table = FormatReport(study, options);
  // The adam row: rank, trial, status, objective, optimizer, then "-" for each absent one.
  const size_t adam_row = table.rfind('\n', table.find(" adam ")) + 1;
  std::istringstream cells(table.substr(adam_row, table.find('\n', adam_row) - adam_row));
  std::vector<std::string> row{std::istream_iterator<std::string>(cells),
                               std::istream_iterator<std::string>()};
  ASSERT_EQ(row.size(), 10u) << table;
  EXPECT_EQ(std::vector<std::string>(row.begin() + 5, row.begin() + 8),
            (std::vector<std::string>{"-", "-", "-"}))
      << table;

  // pandas reads the absent float as NaN, and the marks as written.
  const std::string check =
      "/usr/bin/python3 -c \"import h5py, math, pandas; t = pandas.DataFrame(h5py.File('" + path_ +
      "')['trials'][:]); import sys; sys.exit(0 if math.isnan(t['momentum'][1]) and "
      "t['depth'][1] == -2**63 and t['kind'][1] == b'' and t['momentum'][0] == 0.9 else 1)\"";
  if (std::system("/usr/bin/python3 -c 'import h5py, pandas' >/dev/null 2>&1") == 0) {
    EXPECT_EQ(std::system(check.c_str()), 0) << check;
  }
}

}  // namespace
}  // namespace hpo
