// Warm start: the config key, which earlier trials seed a sweep and in what form, the studies'
// checks, and the searchers and coordinator that take them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "coord/coordinator.hpp"
#include "coord/warm_start.hpp"
#include "coordinator_test_support.hpp"
#include "hpo/config.hpp"
#include "hpo/task_catalog.hpp"
#include "sched/scheduler.hpp"
#include "search/sampling.hpp"
#include "search/searcher.hpp"
#include "study/study_file.hpp"
#include "tasks/classifier_description.hpp"

namespace hpo {
namespace {

namespace fs = std::filesystem;

// A synthetic-task sweep over lr and width (and the constant optimizer), with `extra` lines at
// the top level.
std::string SweepText(int64_t epochs, const std::string& metric, const std::string& extra = "") {
  return "task: synthetic\nepochs: " + std::to_string(epochs) + "\nseed: 3\n" + extra +
         "sweep:\n"
         "  method: bayes\n"
         "  run_cap: 30\n"
         "  metric: {name: " +
         metric + ", goal: " + (metric == "val_loss" ? "minimize" : "maximize") +
         "}\n"
         "  parameters:\n"
         "    lr: {distribution: log_uniform_values, min: 0.0001, max: 0.1}\n"
         "    width: {values: [8, 16, 32]}\n"
         "    optimizer: {value: adam}\n";
}

// "name=value ..." with exact values (Assignment has no operator==).
std::string Text(const std::optional<Assignment>& params) {
  if (!params) return "none";
  std::string text;
  for (const NamedValue& entry : *params) {
    text += entry.name + "=" + FormatParamValueExact(entry.value) + " ";
  }
  return text;
}

SweepConfig Parse(const std::string& text, const std::string& path = "sweep.yaml") {
  SweepConfig config;
  const Status status = ParseConfig(text, path, &config);
  EXPECT_TRUE(status.ok()) << status.message();
  return config;
}

const ParameterSpec& Spec(const SweepConfig& config, const std::string& name) {
  for (const ParameterSpec& spec : config.sweep.parameters) {
    if (spec.name == name) return spec;
  }
  ADD_FAILURE() << "no parameter " << name;
  return config.sweep.parameters.front();
}

// Accuracy peaks at lr = 0.01 and grows over the epochs.
double Accuracy(double lr, int64_t epoch) {
  return 0.9 - 0.2 * std::fabs(std::log10(lr) + 2.0) - 0.1 / static_cast<double>(epoch);
}

TrialResult Trial(int64_t id, double lr, int64_t width, int64_t epochs,
                  TrialStatus status = TrialStatus::kCompleted) {
  TrialResult trial;
  trial.trial_id = id;
  trial.status = status;
  trial.params = {{"lr", lr}, {"width", width}};
  for (int64_t epoch = 1; epoch <= epochs; ++epoch) {
    const double accuracy = Accuracy(lr, epoch);
    trial.curve.push_back({epoch, {1.0, 1.0 - accuracy, accuracy, accuracy, 0.1}});
  }
  trial.epochs = epochs;
  trial.objective = status == TrialStatus::kFailed ? std::nan("") : Accuracy(lr, epochs);
  return trial;
}

TEST(WarmStartConfigTest, APathOrAListOfPathsIsRead) {
  SweepConfig one = Parse(SweepText(3, "val_accuracy", "warm_start: runs/first\n"));
  ASSERT_EQ(one.warm_start.size(), 1u);
  EXPECT_EQ(one.warm_start[0].path, "runs/first");
  EXPECT_EQ(one.warm_start[0].line, 4);
  SweepConfig two = Parse(
      SweepText(3, "val_accuracy", "warm_start:\n  - runs/first/study.h5\n  - /data/other.h5\n"));
  ASSERT_EQ(two.warm_start.size(), 2u);
  EXPECT_EQ(two.warm_start[1].path, "/data/other.h5");
  EXPECT_EQ(two.warm_start[1].line, 6);
}

TEST(WarmStartConfigTest, AnEmptyListADuplicateOrANonStringIsOneLineNamingTheKey) {
  const struct {
    std::string extra;
    std::string message;
  } cases[] = {
      {"warm_start: []\n", "sweep.yaml:4: warm_start: must name at least one study"},
      {"warm_start: [a.h5, a.h5]\n", "sweep.yaml:4: warm_start[1]: names a.h5 twice"},
      {"warm_start: {path: a.h5}\n", "sweep.yaml:4: warm_start:"},
      {"warm_start: ''\n", "sweep.yaml:4: warm_start: must be a study file or an output folder"},
  };
  for (const auto& entry : cases) {
    SweepConfig config;
    const Status status =
        ParseConfig(SweepText(3, "val_accuracy", entry.extra), "sweep.yaml", &config);
    EXPECT_EQ(status.code(), Status::Code::kBadInput) << entry.extra;
    EXPECT_EQ(status.message().rfind(entry.message, 0), 0u) << status.message();
    EXPECT_EQ(status.message().find('\n'), std::string::npos) << status.message();
  }
}

TEST(ValueInSpaceTest, ValuesAreTakenInTheParametersTypeWhenItCouldHaveDrawnThem) {
  const SweepConfig config = Parse(
      "task: synthetic\nepochs: 2\nsweep:\n  method: random\n  run_cap: 2\n"
      "  metric: {name: val_accuracy, goal: maximize}\n  parameters:\n"
      "    lr: {distribution: log_uniform_values, min: 0.0001, max: 0.1}\n"
      "    width: {values: [8, 16, 32]}\n"
      "    batch_size: {distribution: int_uniform, min: 16, max: 64}\n"
      "    optimizer: {values: [sgd, adam]}\n");
  const ParameterSpec& lr = Spec(config, "lr");
  EXPECT_EQ(ValueInSpace(lr, 0.01), std::optional<ParamValue>(0.01));
  EXPECT_EQ(ValueInSpace(lr, 0.1), std::optional<ParamValue>(0.1));
  EXPECT_FALSE(ValueInSpace(lr, 0.5));
  EXPECT_FALSE(ValueInSpace(lr, std::string("0.01")));
  const ParameterSpec& width = Spec(config, "width");
  EXPECT_EQ(ValueInSpace(width, 16.0), std::optional<ParamValue>(int64_t{16}));
  EXPECT_FALSE(ValueInSpace(width, int64_t{12}));
  const ParameterSpec& batch = Spec(config, "batch_size");
  EXPECT_EQ(ValueInSpace(batch, 32.0), std::optional<ParamValue>(int64_t{32}));
  EXPECT_FALSE(ValueInSpace(batch, 32.5));
  EXPECT_FALSE(ValueInSpace(batch, int64_t{128}));
  const ParameterSpec& optimizer = Spec(config, "optimizer");
  EXPECT_EQ(ValueInSpace(optimizer, std::string("adam")),
            std::optional<ParamValue>(std::string("adam")));
  EXPECT_FALSE(ValueInSpace(optimizer, std::string("adamw")));
}

TEST(MapPriorTrialTest, ParametersMapByNameConstantsFillInAndOthersAreDropped) {
  const SweepConfig config = Parse(SweepText(3, "val_accuracy"));
  TrialResult trial = Trial(4, 0.01, 16, 3, TrialStatus::kPaused);
  trial.params.push_back({"dropout", 0.3});  // not in this sweep: dropped
  PriorTrial prior;
  std::string why;
  ASSERT_TRUE(MapPriorTrial(config, trial, 2, true, &prior, &why)) << why;
  EXPECT_EQ(Text(prior.params), "lr=0.01 width=16 optimizer=adam ");
  EXPECT_TRUE(std::holds_alternative<int64_t>(prior.params[1].value));
  EXPECT_EQ(prior.status, TrialStatus::kStopped);  // left paused at a rung
  EXPECT_DOUBLE_EQ(prior.objective, Accuracy(0.01, 3));
  ASSERT_EQ(prior.reports.size(), 3u);
  EXPECT_DOUBLE_EQ(prior.reports.at(2), Accuracy(0.01, 2));
  EXPECT_TRUE(prior.same_epochs);
}

TEST(MapPriorTrialTest, FailedTrialsAndTrialsOutsideTheSpaceAreLeftOutWithTheReason) {
  const SweepConfig config = Parse(SweepText(3, "val_accuracy"));
  PriorTrial prior;
  std::string why;
  EXPECT_FALSE(
      MapPriorTrial(config, Trial(0, 0.01, 16, 3, TrialStatus::kFailed), 2, true, &prior, &why));
  EXPECT_EQ(why, "failed");
  EXPECT_FALSE(MapPriorTrial(config, Trial(1, 0.5, 16, 3), 2, true, &prior, &why));
  EXPECT_EQ(why, "outside the space (lr)");
  EXPECT_FALSE(MapPriorTrial(config, Trial(2, 0.01, 64, 3), 2, true, &prior, &why));
  EXPECT_EQ(why, "outside the space (width)");
}

TEST(MapPriorTrialTest, ATrialWithoutANewParameterIsUsedForThoseItHas) {
  // As SageMaker's transfer-learning warm start and Optuna's: the parent informs the search on
  // lr, and width (added since) is absent in it.
  const SweepConfig config = Parse(SweepText(3, "val_accuracy"));
  TrialResult without_width = Trial(3, 0.01, 16, 3);
  without_width.params.pop_back();
  PriorTrial prior;
  std::string why;
  ASSERT_TRUE(MapPriorTrial(config, without_width, 2, true, &prior, &why)) << why;
  EXPECT_EQ(prior.missing, std::vector<std::string>{"width"});
}

TEST(MapPriorTrialTest, ParametersTheConditionsLeaveOutAreDroppedAndMissingOnesListed) {
  // momentum exists only with sgd: an adam trial's momentum is dropped, an adam trial without
  // one is in the space, an sgd trial without one is not.
  const SweepConfig config = Parse(
      "task: synthetic\nepochs: 3\nsweep:\n  method: bayes\n  run_cap: 5\n"
      "  metric: {name: val_accuracy, goal: maximize}\n  parameters:\n"
      "    lr: {distribution: log_uniform_values, min: 0.0001, max: 0.1}\n"
      "    optimizer: {values: [sgd, adam]}\n"
      "    momentum: {min: 0.5, max: 0.95}\n"
      "conditions:\n  momentum: {optimizer: [sgd]}\n");
  const auto trial = [](const std::string& optimizer, std::optional<double> momentum) {
    TrialResult result = Trial(0, 0.01, 16, 3);
    result.params = {{"lr", 0.01}, {"optimizer", optimizer}};
    if (momentum) result.params.push_back({"momentum", *momentum});
    return result;
  };
  PriorTrial prior;
  std::string why;
  ASSERT_TRUE(MapPriorTrial(config, trial("adam", 0.9), 2, true, &prior, &why)) << why;
  EXPECT_EQ(Text(prior.params), "lr=0.01 optimizer=adam ");
  ASSERT_TRUE(MapPriorTrial(config, trial("adam", std::nullopt), 2, true, &prior, &why)) << why;
  EXPECT_EQ(Text(prior.params), "lr=0.01 optimizer=adam ");
  ASSERT_TRUE(MapPriorTrial(config, trial("sgd", 0.9), 2, true, &prior, &why)) << why;
  EXPECT_EQ(Text(prior.params), "lr=0.01 optimizer=sgd momentum=0.9 ");
  EXPECT_TRUE(prior.missing.empty());
  // An sgd trial without momentum informs the search on the others.
  ASSERT_TRUE(MapPriorTrial(config, trial("sgd", std::nullopt), 2, true, &prior, &why)) << why;
  EXPECT_EQ(prior.missing, std::vector<std::string>{"momentum"});
}

class LoadWarmStartTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = testing::TempDir() + "hpo_warm_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes DIR/NAME/study.h5: a study of SweepText(epochs, metric) holding `trials`.
  // `with_width` false: a study of an earlier sweep that had no `width` parameter.
  std::string WriteStudy(const std::string& name, int64_t epochs, const std::string& metric,
                         const std::vector<TrialResult>& trials, bool with_width = true) {
    const std::string folder = dir_ + "/" + name;
    fs::create_directories(folder);
    StudyLayout layout;
    layout.params = {{"lr", ParamType::kFloat, 0}};
    if (with_width) layout.params.push_back({"width", ParamType::kInt, 0});
    layout.metric_names = ClassifierMetricNames();
    StudyAttributes attributes;
    attributes.config = SweepText(epochs, metric);
    attributes.metric_name = metric;
    attributes.metric_goal = metric == "val_loss" ? "minimize" : "maximize";
    std::unique_ptr<StudyWriter> writer;
    const std::string path = folder + "/" + kStudyFileName;
    Status status = StudyWriter::Create(path, layout, attributes, &writer);
    EXPECT_TRUE(status.ok()) << status.message();
    for (const TrialResult& trial : trials) {
      status = writer->Append(trial);
      EXPECT_TRUE(status.ok()) << status.message();
    }
    EXPECT_TRUE(writer->Close().ok());
    return path;
  }

  // This sweep (3 epochs, val_accuracy) warm-started from `paths`.
  SweepConfig Sweep(const std::vector<std::string>& paths, const std::string& more = "") {
    std::string extra = more + "warm_start:\n";
    for (const std::string& path : paths) extra += "  - " + path + "\n";
    return Parse(SweepText(3, "val_accuracy", extra), "sweep.yaml");
  }

  Status Load(const SweepConfig& config, WarmStart* warm_start) {
    return LoadWarmStart(config, BuiltinTaskCatalog(), dir_ + "/this/study.h5", warm_start);
  }

  std::string dir_;
};

TEST_F(LoadWarmStartTest, TrialsInTheSpaceSeedTheSweepAndTheSummarySaysWhyOthersDoNot) {
  const std::string same = WriteStudy(
      "same", 3, "val_accuracy",
      {Trial(0, 0.01, 16, 3), Trial(1, 0.5, 16, 3), Trial(2, 0.001, 8, 1, TrialStatus::kStopped),
       Trial(3, 0.02, 32, 3, TrialStatus::kFailed)});
  const std::string longer =
      WriteStudy("longer", 9, "val_accuracy", {Trial(0, 0.003, 32, 9), Trial(1, 0.05, 8, 9)});
  // A folder stands for its study.h5.
  const SweepConfig config = Sweep({same, dir_ + "/longer"}, "median_stopping: {min_trials: 3}\n");
  WarmStart warm_start;
  const Status status = Load(config, &warm_start);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(warm_start.trials.size(), 4u);
  EXPECT_EQ(warm_start.trials[1].status, TrialStatus::kStopped);
  EXPECT_EQ(warm_start.trials[1].reports.size(), 1u);
  EXPECT_TRUE(warm_start.trials[0].same_epochs);
  EXPECT_FALSE(warm_start.trials[2].same_epochs);
  EXPECT_EQ(warm_start.trials[3].reports.size(), 9u);
  ASSERT_EQ(warm_start.summary.size(), 2u);
  EXPECT_EQ(warm_start.summary[0],
            "warm start: 2 of 4 trials of " + same +
                " (not used: 1 failed, 1 outside the space (lr)); they seed the search and early "
                "stopping");
  EXPECT_EQ(warm_start.summary[1],
            "warm start: 2 of 2 trials of " + longer +
                "; they seed the search, not early stopping (other epochs per trial)");
  EXPECT_EQ(warm_start.fingerprint, same + ": 4 trials, 2 used; " + longer + ": 2 trials, 2 used");
}

TEST_F(LoadWarmStartTest, ParentsWithoutANewParameterAreUsedAndTheSummarySaysSo) {
  TrialResult a = Trial(0, 0.01, 16, 3);
  TrialResult b = Trial(1, 0.002, 8, 3);
  a.params.pop_back();
  b.params.pop_back();  // an earlier sweep without `width`
  const std::string earlier = WriteStudy("earlier", 3, "val_accuracy", {a, b}, false);
  WarmStart warm_start;
  ASSERT_TRUE(Load(Sweep({earlier}), &warm_start).ok());
  ASSERT_EQ(warm_start.trials.size(), 2u);
  ASSERT_EQ(warm_start.summary.size(), 1u);
  EXPECT_EQ(warm_start.summary[0], "warm start: 2 of 2 trials of " + earlier +
                                       " (used for the parameters they have: 2 without width)"
                                       "; they seed the search");
}

TEST_F(LoadWarmStartTest, WithoutEarlyStoppingTheSummarySaysTheySeedTheSearchAlone) {
  const std::string same = WriteStudy("same", 3, "val_accuracy", {Trial(0, 0.01, 16, 3)});
  WarmStart warm_start;
  ASSERT_TRUE(Load(Sweep({same}), &warm_start).ok());
  ASSERT_EQ(warm_start.summary.size(), 1u);
  EXPECT_EQ(warm_start.summary[0],
            "warm start: 1 of 1 trial of " + same + "; they seed the search");
}

TEST_F(LoadWarmStartTest, AStudyOfAnotherMetricIsOneLineNamingTheEntry) {
  const std::string other = WriteStudy("loss", 3, "val_loss", {Trial(0, 0.01, 16, 3)});
  WarmStart warm_start;
  const Status status = Load(Sweep({other}), &warm_start);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message(), "sweep.yaml:5: warm_start: " + other +
                                  ": its metric is val_loss (minimize), this sweep's "
                                  "val_accuracy (maximize)");
}

TEST_F(LoadWarmStartTest, AMissingFileOrThisSweepsOwnStudyIsBadInput) {
  WarmStart warm_start;
  Status status = Load(Sweep({dir_ + "/nothing.h5"}), &warm_start);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message().rfind("sweep.yaml:5: warm_start: " + dir_ + "/nothing.h5: ", 0), 0u)
      << status.message();
  const std::string own = WriteStudy("this", 3, "val_accuracy", {Trial(0, 0.01, 16, 3)});
  status = Load(Sweep({own}), &warm_start);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find("is this sweep's own study; continue it with --resume"),
            std::string::npos)
      << status.message();
}

// `count` earlier trials spread over lr's range, each at its accuracy after 3 epochs.
std::vector<PriorTrial> SpreadPriors(int count) {
  std::vector<PriorTrial> priors;
  for (int i = 0; i < count; ++i) {
    const double lr = std::pow(10.0, -4.0 + 3.0 * i / (count - 1));
    PriorTrial prior;
    prior.params = {{"lr", lr}, {"width", int64_t{16}}, {"optimizer", std::string("adam")}};
    for (int64_t epoch = 1; epoch <= 3; ++epoch) prior.reports[epoch] = Accuracy(lr, epoch);
    prior.objective = Accuracy(lr, 3);
    prior.same_epochs = true;
    priors.push_back(prior);
  }
  return priors;
}

// How many of the first `count` suggestions have lr within half a decade of the best, 0.01.
int NearTheBest(Searcher& searcher, int count) {
  int near = 0;
  for (int id = 0; id < count; ++id) {
    const std::optional<Assignment> params = searcher.Suggest(id);
    if (!params) return near;
    const double lr = std::get<double>(*FindParam(*params, "lr"));
    if (std::fabs(std::log10(lr) + 2.0) < 0.5) ++near;
    searcher.Observe(id, *params, TrialStatus::kCompleted, Accuracy(lr, 3));
  }
  return near;
}

TEST(WarmStartSearchTest, ModelBasedSearchersStartFromTheEarlierTrialsBestRegion) {
  // 20 earlier trials stand in for the 10 start-up trials: the model proposes from trial 0 and
  // its first 10 trials mostly lie near the best lr, where the cold start's random ones do not.
  for (const char* model : {"tpe", "gp"}) {
    const SweepConfig config =
        Parse(SweepText(3, "val_accuracy", std::string("search: {model: ") + model + "}\n"));
    std::unique_ptr<Searcher> cold;
    std::unique_ptr<Searcher> warm;
    ASSERT_TRUE(MakeSearcher(config, &cold).ok());
    ASSERT_TRUE(MakeSearcher(config, &warm).ok());
    int64_t id = -1;
    for (const PriorTrial& prior : SpreadPriors(20)) {
      warm->Observe(id--, prior.params, TrialStatus::kCompleted, prior.objective);
    }
    const int cold_near = NearTheBest(*cold, 10);
    const int warm_near = NearTheBest(*warm, 10);
    EXPECT_GE(warm_near, 7) << model;
    EXPECT_GE(warm_near, cold_near + 3) << model;
  }
}

TEST(WarmStartSearchTest, EarlierTrialsWithoutANewParameterStillGuideTheOthers) {
  // The same 20 earlier trials from a sweep without `width`: the models still start near the
  // best lr (before, every such trial was dropped and the sweep went cold).
  for (const char* model : {"tpe", "gp"}) {
    const SweepConfig config =
        Parse(SweepText(3, "val_accuracy", std::string("search: {model: ") + model + "}\n"));
    std::unique_ptr<Searcher> warm;
    ASSERT_TRUE(MakeSearcher(config, &warm).ok());
    int64_t id = -1;
    for (PriorTrial prior : SpreadPriors(20)) {
      prior.params.erase(
          std::remove_if(prior.params.begin(), prior.params.end(),
                         [](const NamedValue& entry) { return entry.name == "width"; }),
          prior.params.end());
      warm->Observe(id--, prior.params, TrialStatus::kCompleted, prior.objective);
    }
    EXPECT_GE(NearTheBest(*warm, 10), 7) << model;
  }
}

TEST(WarmStartSearchTest, FewerEarlierTrialsThanStartUpTrialsShortenTheStartUp) {
  // startup_trials 10 with 7 earlier trials: trials 0-2 are the start-up design's (as in a cold
  // sweep), trial 3 on is the model's.
  const SweepConfig config = Parse(SweepText(3, "val_accuracy", "search: {model: gp}\n"));
  std::unique_ptr<Searcher> cold;
  std::unique_ptr<Searcher> warm;
  ASSERT_TRUE(MakeSearcher(config, &cold).ok());
  ASSERT_TRUE(MakeSearcher(config, &warm).ok());
  int64_t id = -1;
  for (const PriorTrial& prior : SpreadPriors(7)) {
    warm->Observe(id--, prior.params, TrialStatus::kCompleted, prior.objective);
  }
  for (int64_t trial = 0; trial < 3; ++trial) {
    EXPECT_TRUE(warm->StartSuggestion(trial) == nullptr) << trial;
    const std::optional<Assignment> params = warm->Suggest(trial);
    ASSERT_TRUE(params.has_value());
    EXPECT_EQ(Text(params), Text(cold->Suggest(trial))) << trial;
    const double lr = std::get<double>(*FindParam(*params, "lr"));
    warm->Observe(trial, *params, TrialStatus::kCompleted, Accuracy(lr, 3));
  }
  EXPECT_TRUE(warm->StartSuggestion(3) != nullptr);
}

// Records what the coordinator tells it.
class RecordingSearcher final : public Searcher {
 public:
  std::optional<Assignment> Suggest(int64_t trial_id) override {
    return Assignment{{"lr", 0.001 * static_cast<double>(trial_id + 1)}};
  }
  void Observe(int64_t trial_id, const Assignment& params, TrialStatus status,
               double objective) override {
    observed.push_back({trial_id, params, status, objective});
  }
  void ObserveEpoch(int64_t trial_id, const Assignment&, int64_t epoch, double) override {
    epochs.emplace_back(trial_id, epoch);
  }
  std::optional<int64_t> SpaceSize() const override { return std::nullopt; }
  std::string SaveState() const override { return "recording"; }
  Status RestoreState(const std::string&) override { return Status::Ok(); }

  struct Observation {
    int64_t trial_id;
    Assignment params;
    TrialStatus status;
    double objective;
  };
  std::vector<Observation> observed;
  std::vector<std::pair<int64_t, int64_t>> epochs;
};

class RecordingScheduler final : public Scheduler {
 public:
  SchedulerDecision OnEpoch(int64_t, int64_t, double) override { return {}; }
  void ReplayTrial(int64_t trial_id, const std::map<int64_t, double>& reports,
                   TrialStatus status) override {
    replayed.push_back({trial_id, reports.size(), status});
  }
  std::string SaveState() const override { return "recording"; }
  Status RestoreState(const std::string&) override { return Status::Ok(); }

  struct Replay {
    int64_t trial_id;
    size_t reports;
    TrialStatus status;
  };
  std::vector<Replay> replayed;
};

class NullStudy final : public StudyWriter {
 public:
  Status Stage(const TrialResult& result) override {
    rows.push_back(result);
    return Status::Ok();
  }
  Status StageTable(const MetricTable&) override { return Status::Ok(); }
  Status Close() override { return Status::Ok(); }
  Status Publish(const std::map<std::string, StudyAttribute>& set) override {
    for (const auto& [name, value] : set) attributes[name] = value;
    return Status::Ok();
  }
  std::vector<TrialResult> rows;
  std::map<std::string, StudyAttribute> attributes;
};

WarmStart TwoPriors() {
  WarmStart warm_start;
  warm_start.trials = SpreadPriors(2);
  warm_start.trials[1].same_epochs = false;
  warm_start.trials[1].status = TrialStatus::kStopped;
  warm_start.fingerprint = "a/study.h5: 2 trials, 2 used";
  return warm_start;
}

TEST(WarmStartCoordinatorTest, EarlierTrialsAreObservedFirstAsNegativeIdsAndTheirStudyRecorded) {
  const SweepConfig config = Parse(SweepText(3, "val_accuracy"));
  NullStudy study;
  CoordinatorDeps deps;
  auto searcher = std::make_unique<RecordingSearcher>();
  auto scheduler = std::make_unique<RecordingScheduler>();
  RecordingSearcher* searcher_seen = searcher.get();
  RecordingScheduler* scheduler_seen = scheduler.get();
  deps.searcher = std::move(searcher);
  deps.scheduler = std::move(scheduler);
  deps.study = &study;
  deps.clock = [] { return 0.0; };
  deps.warm_start = TwoPriors();
  Coordinator coordinator(config, 1, std::move(deps));

  ASSERT_EQ(searcher_seen->observed.size(), 2u);
  EXPECT_EQ(searcher_seen->observed[0].trial_id, -1);
  EXPECT_EQ(searcher_seen->observed[1].trial_id, -2);
  EXPECT_EQ(searcher_seen->observed[1].status, TrialStatus::kStopped);
  EXPECT_EQ(Text(searcher_seen->observed[0].params), Text(TwoPriors().trials[0].params));
  EXPECT_EQ(searcher_seen->epochs.size(), 6u);  // both curves reach the searcher
  // Only the trial that ran this sweep's epochs seeds the scheduler.
  ASSERT_EQ(scheduler_seen->replayed.size(), 1u);
  EXPECT_EQ(scheduler_seen->replayed[0].trial_id, -1);
  EXPECT_EQ(scheduler_seen->replayed[0].reports, 3u);
  EXPECT_EQ(scheduler_seen->replayed[0].status, TrialStatus::kCompleted);

  // The next publish (here after trial 0's result) records the earlier studies.
  ControlMessage request;
  request.kind = MessageKind::kRequestTrial;
  std::optional<ControlMessage> reply;
  ASSERT_TRUE(coordinator.Handle(0, request, &reply).ok());
  ASSERT_TRUE(reply.has_value());
  ControlMessage done;
  done.kind = MessageKind::kTrialResult;
  done.result.trial_id = reply->trial.trial_id;
  done.result.status = TrialStatus::kCompleted;
  done.result.curve = {{1, {1.0, 1.0, 0.5, 0.1}}};
  ASSERT_TRUE(coordinator.Handle(0, done, &reply).ok());
  ASSERT_TRUE(coordinator.Publish().ok());
  ASSERT_EQ(study.attributes.count("warm_start"), 1u);
  EXPECT_EQ(study.attributes.at("warm_start"), StudyAttribute(TwoPriors().fingerprint));
}

TEST(WarmStartCoordinatorTest, AResumeRefusesWarmStartStudiesThatChanged) {
  const SweepConfig config = Parse(SweepText(3, "val_accuracy"));
  NullStudy study;
  CoordinatorDeps deps;
  ASSERT_TRUE(MakeSearcher(config, &deps.searcher).ok());
  deps.study = &study;
  deps.clock = [] { return 0.0; };
  deps.warm_start = TwoPriors();
  Coordinator coordinator(config, 1, std::move(deps));
  StudyContents contents;
  contents.extra_attributes["warm_start"] = std::string("a/study.h5: 1 trials, 1 used");
  const Status status = coordinator.Restore(contents);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message(),
            "the warm_start studies changed since this study began (then: a/study.h5: 1 trials, "
            "1 used; now: a/study.h5: 2 trials, 2 used)");
}

TEST(WarmStartCoordinatorTest, AResumeRebuildsTheStateTheWarmStartedSweepHad) {
  // TPE with ASHA, 3 start-up trials and 5 earlier trials: the model proposes from trial 0. A
  // coordinator restored from the published study, given the same earlier trials, holds the same
  // searcher and scheduler state as the one that wrote it.
  const SweepConfig config =
      Parse(SweepText(3, "val_accuracy", "search: {model: tpe, startup_trials: 3}\n") +
            "  early_terminate: {type: hyperband, min_iter: 1, eta: 2}\n");
  NullStudy study;
  const auto make = [&](Searcher** searcher, Scheduler** scheduler) {
    CoordinatorDeps deps = test_support::ConfiguredDeps(config, &study, searcher, scheduler);
    deps.warm_start.trials = SpreadPriors(5);
    deps.warm_start.fingerprint = "earlier: 5 trials, 5 used";
    return std::make_unique<Coordinator>(config, 1, std::move(deps));
  };
  Searcher* searcher = nullptr;
  Scheduler* scheduler = nullptr;
  std::unique_ptr<Coordinator> coordinator = make(&searcher, &scheduler);
  const auto handle = [&](const ControlMessage& message) {
    std::optional<ControlMessage> reply;
    EXPECT_TRUE(coordinator->Handle(0, message, &reply).ok());
    while (message.kind == MessageKind::kRequestTrial && !reply) {
      for (auto& [to, later] : coordinator->TakeReplies()) reply = std::move(later);
      std::this_thread::yield();
    }
    return reply;
  };
  ControlMessage request;
  request.kind = MessageKind::kRequestTrial;
  for (int i = 0; i < 6; ++i) {
    const TrialSpec trial = handle(request)->trial;
    const double lr = std::get<double>(*FindParam(trial.params, "lr"));
    ControlMessage done;
    done.kind = MessageKind::kTrialResult;
    done.result.trial_id = trial.trial_id;
    done.result.params = trial.params;
    done.result.status = TrialStatus::kCompleted;
    for (int64_t epoch = 1; epoch <= 3; ++epoch) {
      ControlMessage report;
      report.kind = MessageKind::kEpochReport;
      report.trial_id = trial.trial_id;
      report.metrics = {epoch, {1.0, 1.0, Accuracy(lr, epoch), 0.1}};
      done.result.curve.push_back(report.metrics);
      if (!handle(report)->keep_going) {
        done.result.status = epoch < 3 ? TrialStatus::kStopped : TrialStatus::kCompleted;
        break;
      }
    }
    handle(done);
  }
  ASSERT_TRUE(coordinator->Publish().ok());
  const std::string searcher_state = searcher->SaveState();
  const std::string scheduler_state = scheduler->SaveState();
  StudyContents contents;
  contents.trials = study.rows;
  contents.extra_attributes = study.attributes;
  coordinator = make(&searcher, &scheduler);
  const Status restored = coordinator->Restore(contents);
  ASSERT_TRUE(restored.ok()) << restored.message();
  EXPECT_EQ(searcher->SaveState(), searcher_state);
  EXPECT_EQ(scheduler->SaveState(), scheduler_state);
}

}  // namespace
}  // namespace hpo
