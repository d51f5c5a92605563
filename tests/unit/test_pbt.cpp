// Population-based training: the `pbt:` key and its refusals, the exploit/explore decisions of
// PbtPopulation on hand-computed populations, and the coordinator that pauses, replaces and
// resumes members (with a real study file, so that a resume reads what was written).
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "coord/coordinator.hpp"
#include "hpo/config.hpp"
#include "hpo/param.hpp"
#include "hpo/trial.hpp"
#include "report/report.hpp"
#include "sched/pbt.hpp"
#include "search/searcher.hpp"
#include "study/study_file.hpp"

namespace hpo {
namespace {

// A synthetic-task sweep with `pbt` as the text of the `pbt:` key (empty: none) and `extra` lines.
std::string PbtSweepText(const std::string& pbt, const std::string& extra = "",
                         int64_t epochs = 4) {
  std::string text = "task: synthetic\nepochs: " + std::to_string(epochs) + "\nseed: 5\n" + extra +
                     "sweep:\n"
                     "  method: random\n"
                     "  run_cap: 4\n"
                     "  metric: {name: val_accuracy, goal: maximize}\n"
                     "  parameters:\n"
                     "    lr: {distribution: log_uniform_values, min: 0.001, max: 0.1}\n"
                     "    width: {values: [8, 16, 32]}\n"
                     "    batch_size: {values: [32, 64]}\n"
                     "    optimizer: {value: adam}\n";
  if (!pbt.empty()) text += "pbt:\n" + pbt;
  return text;
}

const char kPbtKey[] =
    "  population: 4\n  perturbation_interval: 2\n  quantile: 0.25\n  mutations: [lr]\n";

Status ParsePbtSweep(const std::string& text, SweepConfig* config) {
  return ParseConfig(text, "pbt.yaml", config);
}

std::string ParseError(const std::string& text) {
  SweepConfig config;
  const Status status = ParsePbtSweep(text, &config);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  return status.message();
}

TEST(PbtConfigTest, PlannedTrialsCountTheChildrenAsTheBannerAndStatusSay) {
  // 4 members of 6 epochs, one replaced at epochs 2 and 4: 6 trials, not run_cap's 4.
  SweepConfig config;
  ASSERT_TRUE(ParsePbtSweep(PbtSweepText(kPbtKey, "", 6), &config).ok());
  EXPECT_EQ(PlannedTrialCount(config, std::nullopt), 6);
  SweepConfig plain;
  ASSERT_TRUE(ParsePbtSweep(PbtSweepText(""), &plain).ok());
  EXPECT_EQ(PlannedTrialCount(plain, std::nullopt), 4);
  EXPECT_EQ(PlannedTrialCount(plain, int64_t{3}), 3);  // a space of 3 points
}

TEST(PbtConfigTest, ParsesTheKey) {
  SweepConfig config;
  const Status status =
      ParsePbtSweep(PbtSweepText("  population: 4\n  perturbation_interval: 2\n  quantile: 0.5\n"
                                 "  mutations: [lr, batch_size]\n  resample_probability: 0.1\n"),
                    &config);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(config.pbt.enabled);
  EXPECT_EQ(config.pbt.population, 4);
  EXPECT_EQ(config.pbt.perturbation_interval, 2);
  EXPECT_DOUBLE_EQ(config.pbt.quantile, 0.5);
  EXPECT_EQ(config.pbt.mutations, (std::vector<std::string>{"lr", "batch_size"}));
  EXPECT_DOUBLE_EQ(config.pbt.resample_probability, 0.1);
  EXPECT_EQ(config.pbt.line, 13);
  SweepConfig without;
  ASSERT_TRUE(ParsePbtSweep(PbtSweepText(""), &without).ok());
  EXPECT_FALSE(without.pbt.enabled);
}

TEST(PbtConfigTest, RefusesWhatCannotWork) {
  EXPECT_EQ(ParseError(PbtSweepText(kPbtKey, "checkpoint: {interval: 0}\n")),
            "pbt.yaml:14: pbt: population-based training needs checkpoints (members continue "
            "from them): remove checkpoint.interval: 0");
  EXPECT_EQ(ParseError(PbtSweepText(
                "  population: 4\n  perturbation_interval: 2\n  mutations: [lr, momentum]\n")),
            "pbt.yaml:16: pbt.mutations[1]: 'momentum' is not a parameter of the sweep");
  EXPECT_EQ(ParseError(PbtSweepText("  population: 4\n  mutations: [optimizer]\n")),
            "pbt.yaml:15: pbt.mutations[0]: 'optimizer' is a constant (value:): nothing to "
            "perturb");
  EXPECT_NE(ParseError(PbtSweepText("  population: 1\n  mutations: [lr]\n")).find("pbt.population"),
            std::string::npos);
  EXPECT_EQ(ParseError(PbtSweepText("  population: 4\n  quantile: 0.6\n  mutations: [lr]\n")),
            "pbt.yaml:15: pbt.quantile: must be in (0, 0.5], got 0.6");
  EXPECT_EQ(ParseError(PbtSweepText("  population: 4\n  quantile: 0\n  mutations: [lr]\n")),
            "pbt.yaml:15: pbt.quantile: must be in (0, 0.5], got 0");
  EXPECT_EQ(ParseError(PbtSweepText("  population: 4\n  perturbation_interval: 4\n"
                                    "  mutations: [lr]\n")),
            "pbt.yaml:15: pbt.perturbation_interval: must be < epochs (4): members exploit and "
            "explore between epochs");
  EXPECT_EQ(ParseError(PbtSweepText(kPbtKey, "median_stopping: {min_trials: 2}\n")),
            "pbt.yaml:14: pbt: population-based training replaces early stopping: remove "
            "sweep.early_terminate and median_stopping");
  std::string hyperband = PbtSweepText(kPbtKey);
  hyperband.replace(hyperband.find("  parameters:"), 0,
                    "  early_terminate: {type: hyperband, min_iter: 1}\n");
  EXPECT_EQ(ParseError(hyperband),
            "pbt.yaml:14: pbt: population-based training replaces early stopping: remove "
            "sweep.early_terminate and median_stopping");
  std::string objectives = PbtSweepText(kPbtKey);
  objectives.replace(objectives.find("  metric: {name: val_accuracy, goal: maximize}"),
                     std::string("  metric: {name: val_accuracy, goal: maximize}").size(),
                     "  metric:\n    - {name: val_accuracy, goal: maximize}\n"
                     "    - {name: val_loss, goal: minimize}");
  EXPECT_EQ(ParseError(objectives),
            "pbt.yaml:15: pbt: population-based training ranks members by one objective; "
            "sweep.metric lists 2");
  // A mutation the checkpoint cannot carry across: the model's shape, the optimizer's kind.
  EXPECT_EQ(ParseError(PbtSweepText("  population: 4\n  mutations: [lr, width]\n")),
            "pbt.yaml:15: pbt.mutations[1]: 'width' shapes the model or picks the optimizer, so "
            "a child could not load its parent's checkpoint under another value; mutate training "
            "settings (lr, weight_decay, dropout, batch_size)");
  std::string optimizers = PbtSweepText("  population: 4\n  mutations: [optimizer]\n");
  optimizers.replace(optimizers.find("{value: adam}"), std::string("{value: adam}").size(),
                     "{values: [sgd, adam]}");
  EXPECT_NE(ParseError(optimizers).find("pbt.yaml:15: pbt.mutations[0]: 'optimizer' shapes"),
            std::string::npos);
}

// A TorchScript sweep's `{placeholder}` of `model` picks the model file: not a mutation.
TEST(PbtConfigTest, RefusesAMutationThatPicksTheTorchScriptModel) {
  const std::string text =
      "task: torchscript\nmodel: models/net_{arch}.pt\ndata: data.h5\nepochs: 4\n"
      "sweep:\n"
      "  method: random\n"
      "  run_cap: 4\n"
      "  metric: {name: val_accuracy, goal: maximize}\n"
      "  parameters:\n"
      "    lr: {distribution: log_uniform_values, min: 0.001, max: 0.1}\n"
      "    arch: {values: [small, large]}\n"
      "pbt:\n  population: 4\n  mutations: [lr, arch]\n";
  EXPECT_NE(ParseError(text).find("pbt.yaml:14: pbt.mutations[1]: 'arch' shapes the model"),
            std::string::npos);
  // Mutating lr alone passes the pbt checks and reaches the task's own (no model files here).
  std::string learning_rate_only = text;
  learning_rate_only.replace(learning_rate_only.find("[lr, arch]"), 10, "[lr]");
  EXPECT_NE(ParseError(learning_rate_only).find("pbt.yaml:2: model: "), std::string::npos);
}

PbtSpec Spec(int64_t population, double quantile, double resample) {
  PbtSpec spec;
  spec.enabled = true;
  spec.population = population;
  spec.perturbation_interval = 2;
  spec.quantile = quantile;
  spec.mutations = {"lr", "width"};
  spec.resample_probability = resample;
  return spec;
}

std::vector<ParameterSpec> Parameters() {
  ParameterSpec lr;
  lr.name = "lr";
  lr.distribution = Distribution::kLogUniformValues;
  lr.type = ParamType::kFloat;
  lr.min = 0.001;
  lr.max = 0.1;
  ParameterSpec width;
  width.name = "width";
  width.distribution = Distribution::kCategorical;
  width.type = ParamType::kInt;
  width.values = {int64_t{8}, int64_t{16}, int64_t{32}};
  return {lr, width};
}

Assignment Params(double lr, int64_t width) { return {{"lr", lr}, {"width", width}}; }

// A population of `values.size()` initial members (ids 0, 1, ...) that all reached epoch 2.
PbtPopulation Gathered(const PbtSpec& spec, const std::vector<double>& values, uint64_t seed = 7) {
  PbtPopulation population(spec, Parameters(), Goal::kMaximize, "val_accuracy", 6, seed,
                           static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i) {
    const auto id = static_cast<int64_t>(i);
    population.Join(id, Params(0.01 * static_cast<double>(i + 1), 16), 0);
    EXPECT_FALSE(population.OnEpoch(id, 1, values[i] / 2));
    EXPECT_TRUE(population.OnEpoch(id, 2, values[i]));
  }
  return population;
}

TEST(PbtPopulationTest, ReplacesTheBottomQuantileByCopiesOfTheTop) {
  // Values 0.5 0.9 0.3 0.7 NaN 0.6 0.8 0.2 (maximize): ranked 1 6 3 5 0 2 7 4 (NaN last).
  // n = min(ceil(8 * 0.25), 4) = 2: trial 4 (NaN) and trial 7 (0.2) go, parents from {1, 6}.
  const double nan = std::nan("");
  PbtPopulation population = Gathered(Spec(8, 0.25, 0.0), {0.5, 0.9, 0.3, 0.7, nan, 0.6, 0.8, 0.2});
  std::optional<PbtGeneration> generation = population.Decide(8);
  ASSERT_TRUE(generation.has_value());
  EXPECT_EQ(generation->epoch, 2);
  EXPECT_EQ(generation->continuing, (std::vector<int64_t>{0, 1, 2, 3, 5, 6}));
  ASSERT_EQ(generation->exploits.size(), 2u);
  EXPECT_EQ(generation->exploits[0].replaced, 4);
  EXPECT_EQ(generation->exploits[0].child, 8);
  EXPECT_EQ(generation->exploits[1].replaced, 7);
  EXPECT_EQ(generation->exploits[1].child, 9);
  for (const PbtExploit& exploit : generation->exploits) {
    EXPECT_TRUE(exploit.parent == 1 || exploit.parent == 6) << exploit.parent;
    // lr perturbed by exactly 0.8 or 1.2 (no resampling), width (categorical) resampled.
    const double parent_lr = 0.01 * static_cast<double>(exploit.parent + 1);
    const double lr = std::get<double>(*FindParam(exploit.params, "lr"));
    EXPECT_TRUE(std::abs(lr - 0.8 * parent_lr) < 1e-12 || std::abs(lr - 1.2 * parent_lr) < 1e-12)
        << lr;
    const int64_t width = std::get<int64_t>(*FindParam(exploit.params, "width"));
    EXPECT_TRUE(width == 8 || width == 16 || width == 32);
    EXPECT_NE(exploit.reason.find("replaced by trial " + std::to_string(exploit.child)),
              std::string::npos);
  }
  EXPECT_NE(generation->exploits[1].reason.find(
                "stopped by population-based training at epoch 2: val_accuracy 0.2 in the "
                "bottom 2 of 8 members"),
            std::string::npos)
      << generation->exploits[1].reason;
  // Decided once: the members wait no more, even when one reports epoch 2 again (a command
  // trial's program resumed from a checkpoint before it); the children join at epoch 2.
  EXPECT_FALSE(population.OnEpoch(0, 2, 0.5));
  EXPECT_FALSE(population.OnEpoch(8, 2, 0.5));
  EXPECT_FALSE(population.Decide(10).has_value());
  EXPECT_FALSE(population.WaitingAt(0).has_value());
  EXPECT_TRUE(population.Known(9));
  EXPECT_EQ(population.PlannedTrials(), 8 + 2 * 2);  // boundaries 2 and 4 of 6 epochs
}

TEST(PbtPopulationTest, WaitsForTheWholePopulation) {
  PbtPopulation population(Spec(3, 0.25, 0.0), Parameters(), Goal::kMinimize, "val_loss", 6, 1, 3);
  population.Join(0, Params(0.01, 8), 0);
  population.Join(1, Params(0.02, 8), 0);
  EXPECT_TRUE(population.OnEpoch(0, 2, 0.5));
  EXPECT_TRUE(population.OnEpoch(1, 2, 0.4));
  EXPECT_FALSE(population.Decide(3).has_value());  // member 2 has not joined
  population.Join(2, Params(0.03, 8), 0);
  EXPECT_FALSE(population.Decide(3).has_value());  // nor reached epoch 2
  EXPECT_FALSE(population.OnEpoch(2, 1, 0.9));
  EXPECT_TRUE(population.OnEpoch(2, 2, 0.9));
  std::optional<PbtGeneration> generation = population.Decide(3);
  ASSERT_TRUE(generation.has_value());
  // n = min(ceil(0.75), 1) = 1: the highest loss (trial 2) goes, the lowest (trial 1) is copied.
  ASSERT_EQ(generation->exploits.size(), 1u);
  EXPECT_EQ(generation->exploits[0].replaced, 2);
  EXPECT_EQ(generation->exploits[0].parent, 1);
  EXPECT_EQ(generation->continuing, (std::vector<int64_t>{0, 1}));
}

TEST(PbtPopulationTest, ALeavingMemberCompletesAGenerationAndForceDecidesAnIncompleteOne) {
  PbtPopulation population(Spec(3, 0.5, 0.0), Parameters(), Goal::kMaximize, "val_accuracy", 6, 1,
                           3);
  population.Join(0, Params(0.01, 8), 0);
  population.Join(1, Params(0.02, 8), 0);
  population.Join(2, Params(0.03, 8), 0);
  EXPECT_TRUE(population.OnEpoch(0, 2, 0.5));
  EXPECT_TRUE(population.OnEpoch(1, 2, 0.6));
  EXPECT_FALSE(population.Decide(3).has_value());
  population.Leave(2);  // failed
  std::optional<PbtGeneration> generation = population.Decide(3);
  ASSERT_TRUE(generation.has_value());
  ASSERT_EQ(generation->exploits.size(), 1u);  // min(ceil(2 * 0.5), 1)
  EXPECT_EQ(generation->exploits[0].replaced, 0);

  PbtPopulation partial(Spec(4, 0.5, 0.0), Parameters(), Goal::kMaximize, "val_accuracy", 6, 1, 4);
  partial.Join(0, Params(0.01, 8), 0);
  partial.Join(1, Params(0.02, 8), 0);
  EXPECT_TRUE(partial.OnEpoch(0, 2, 0.5));
  EXPECT_TRUE(partial.OnEpoch(1, 2, 0.6));
  EXPECT_FALSE(partial.Decide(2).has_value());
  EXPECT_TRUE(partial.Decide(2, /*force=*/true).has_value());
}

TEST(PbtPopulationTest, ExploreStaysInRangeAndResamples) {
  PbtSpec spec = Spec(4, 0.25, 0.0);
  PbtPopulation population(spec, Parameters(), Goal::kMaximize, "val_accuracy", 6, 1, 4);
  std::mt19937_64 rng(3);
  std::set<int64_t> widths;
  for (int i = 0; i < 200; ++i) {
    const Assignment explored = population.Explore(Params(0.09, 16), rng);
    const double lr = std::get<double>(*FindParam(explored, "lr"));
    // 0.09 * 1.2 = 0.108 is clamped to the range's max 0.1.
    EXPECT_TRUE(std::abs(lr - 0.072) < 1e-12 || lr == 0.1) << lr;
    widths.insert(std::get<int64_t>(*FindParam(explored, "width")));
  }
  EXPECT_EQ(widths, (std::set<int64_t>{8, 16, 32}));
  PbtPopulation resampling(Spec(4, 0.25, 1.0), Parameters(), Goal::kMaximize, "val_accuracy", 6, 1,
                           4);
  int off_grid = 0;
  for (int i = 0; i < 50; ++i) {
    const double lr = std::get<double>(*FindParam(resampling.Explore(Params(0.09, 16), rng), "lr"));
    EXPECT_GE(lr, 0.001);
    EXPECT_LE(lr, 0.1);
    off_grid += std::abs(lr - 0.072) > 1e-9 && lr != 0.1 ? 1 : 0;
  }
  EXPECT_EQ(off_grid, 50);
}

std::string Describe(const PbtGeneration& generation) {
  std::ostringstream text;
  text << "epoch " << generation.epoch << " continue";
  for (const int64_t id : generation.continuing) text << ' ' << id;
  for (const PbtExploit& exploit : generation.exploits) {
    text << " | " << exploit.replaced << "->" << exploit.child << " from " << exploit.parent;
    for (const NamedValue& entry : exploit.params) {
      text << ' ' << entry.name << '=' << FormatParamValueExact(entry.value);
    }
  }
  return text.str();
}

TEST(PbtPopulationTest, SeededDecisionsRepeatAndReplayRebuildsTheState) {
  const std::vector<double> values = {0.5, 0.9, 0.3, 0.7, 0.4, 0.6, 0.8, 0.2};
  PbtPopulation first = Gathered(Spec(8, 0.25, 0.3), values, 11);
  PbtPopulation second = Gathered(Spec(8, 0.25, 0.3), values, 11);
  const std::string decided = Describe(*first.Decide(8));
  EXPECT_EQ(decided, Describe(*second.Decide(8)));
  PbtPopulation other_seed = Gathered(Spec(8, 0.25, 0.3), values, 12);
  EXPECT_NE(decided, Describe(*other_seed.Decide(8)));

  // Second generation, live: the continuing members and the children report epochs 3 and 4.
  const auto run_to_four = [](PbtPopulation* population) {
    for (int64_t id : {0, 1, 3, 4, 5, 6, 8, 9}) {
      population->OnEpoch(id, 3, 0.1 * static_cast<double>(id));
      population->OnEpoch(id, 4, 0.05 * static_cast<double>(id) + 0.3);
    }
  };
  run_to_four(&first);
  std::optional<PbtGeneration> next = first.Decide(10);
  ASSERT_TRUE(next.has_value());
  const std::string second_generation = Describe(*next);

  // Replay, as Restore does: every member joins (children at their parent's epoch), its reports
  // in epoch order, those that ended leave; then the same decision.
  PbtPopulation third = Gathered(Spec(8, 0.25, 0.3), values, 11);
  std::optional<PbtGeneration> original = third.Decide(8);  // only for the children's params
  ASSERT_TRUE(original.has_value());
  PbtPopulation replayed(Spec(8, 0.25, 0.3), Parameters(), Goal::kMaximize, "val_accuracy", 6, 11,
                         8);
  for (int64_t id = 0; id < 8; ++id) {
    replayed.Join(id, Params(0.01 * static_cast<double>(id + 1), 16), 0);
  }
  for (const PbtExploit& exploit : original->exploits)
    replayed.Join(exploit.child, exploit.params, 2);
  for (int64_t id = 0; id < 8; ++id) {
    replayed.OnEpoch(id, 1, values[static_cast<size_t>(id)] / 2);
    replayed.OnEpoch(id, 2, values[static_cast<size_t>(id)]);
  }
  replayed.Leave(6 + 1);  // the replaced ones (trial 7 and trial 2: the two lowest values)
  replayed.Leave(2);
  run_to_four(&replayed);
  std::optional<PbtGeneration> replayed_next = replayed.Decide(10);
  ASSERT_TRUE(replayed_next.has_value());
  EXPECT_EQ(Describe(*replayed_next), second_generation);
}

// Records the checkpoints copied.
class CopyingArtifacts final : public TrialArtifacts {
 public:
  void Discard(int64_t) override {}
  void DiscardCheckpoint(int64_t trial_id) override { discarded.push_back(trial_id); }
  Status CopyCheckpoint(int64_t from, int64_t to) override {
    copies.emplace_back(from, to);
    return Status::Ok();
  }
  std::vector<std::pair<int64_t, int64_t>> copies;
  std::vector<int64_t> discarded;
};

class PbtCoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(ParsePbtSweep(PbtSweepText(kPbtKey), &config_).ok());
    folder_ =
        std::filesystem::temp_directory_path() / ("hpo_pbt_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(folder_);
    std::filesystem::create_directories(folder_);
    path_ = (folder_ / "study.h5").string();
    layout_.metric_names = config_.metric_names;
    layout_.lineage = true;
    layout_.params = {{"lr", ParamType::kFloat, 0, false},
                      {"width", ParamType::kInt, 0, false},
                      {"optimizer", ParamType::kString, 8, false}};
    StudyAttributes attributes;
    attributes.config = config_.text;
    attributes.metric_name = "val_accuracy";
    attributes.metric_goal = "maximize";
    ASSERT_TRUE(StudyWriter::Create(path_, layout_, attributes, &writer_).ok());
  }
  void TearDown() override {
    writer_.reset();
    std::filesystem::remove_all(folder_);
  }

  std::unique_ptr<Coordinator> Make(StudyWriter* study) {
    CoordinatorDeps deps;
    EXPECT_TRUE(MakeSearcher(config_, &deps.searcher).ok());
    deps.study = study;
    deps.artifacts = &artifacts_;
    deps.progress = &progress_;
    deps.clock = [] { return 0.0; };
    return std::make_unique<Coordinator>(config_, 2, std::move(deps));
  }

  TrialSpec Request(Coordinator& coordinator, int group) {
    ControlMessage request;
    request.kind = MessageKind::kRequestTrial;
    std::optional<ControlMessage> reply;
    EXPECT_TRUE(coordinator.Handle(group, request, &reply).ok());
    EXPECT_TRUE(reply && reply->kind == MessageKind::kTrial);
    return reply ? reply->trial : TrialSpec{};
  }

  EpochMetrics Metrics(int64_t epoch, double accuracy) const {
    EpochMetrics metrics;
    metrics.epoch = epoch;
    metrics.values.assign(config_.metric_names.size(), 0.5);
    for (size_t m = 0; m < config_.metric_names.size(); ++m) {
      if (config_.metric_names[m] == "val_accuracy") metrics.values[m] = accuracy;
    }
    return metrics;
  }

  // Trial `trial` on `group` reports epochs from `first` on (accuracy `base` + epoch / 100), then
  // sends its result: running (a pause or an interruption) when told so, completed otherwise.
  // Its curve holds the epochs restored from its checkpoint (a member's, before `first`) too.
  void Run(Coordinator& coordinator, int group, const TrialSpec& trial, double base,
           int64_t first = 1) {
    if (trial.parent_trial >= 0) first = std::max(first, trial.parent_epoch + 1);
    std::vector<EpochMetrics> curve;
    const int64_t restored_from = trial.parent_trial >= 0 ? trial.parent_epoch + 1 : 1;
    for (int64_t epoch = restored_from; epoch < first; ++epoch) {
      curve.push_back(Metrics(epoch, base + 0.01 * static_cast<double>(epoch)));
    }
    TrialStatus status = TrialStatus::kCompleted;
    for (int64_t epoch = first; epoch <= config_.execution.epochs; ++epoch) {
      ControlMessage report;
      report.kind = MessageKind::kEpochReport;
      report.trial_id = trial.trial_id;
      report.metrics = Metrics(epoch, base + 0.01 * static_cast<double>(epoch));
      curve.push_back(report.metrics);
      std::optional<ControlMessage> reply;
      ASSERT_TRUE(coordinator.Handle(group, report, &reply).ok());
      ASSERT_TRUE(reply.has_value());
      if (!reply->keep_going) {
        status = TrialStatus::kRunning;
        break;
      }
    }
    ControlMessage done;
    done.kind = MessageKind::kTrialResult;
    done.result.trial_id = trial.trial_id;
    done.result.status = status;
    done.result.params = trial.params;
    done.result.curve = curve;
    done.result.duration_s = RunSeconds(trial.trial_id);
    std::optional<ControlMessage> reply;
    const Status handled = coordinator.Handle(group, done, &reply);
    ASSERT_TRUE(handled.ok()) << handled.message();
  }

  // How long Run says trial `trial_id`'s run took.
  static double RunSeconds(int64_t trial_id) { return 1.5 + static_cast<double>(trial_id); }

  SweepConfig config_;
  StudyLayout layout_;
  std::filesystem::path folder_;
  std::string path_;
  std::unique_ptr<StudyWriter> writer_;
  CopyingArtifacts artifacts_;
  std::ostringstream progress_;
};

TEST_F(PbtCoordinatorTest, AGenerationWaitsUntilEveryPauseHasArrived) {
  std::unique_ptr<Coordinator> coordinator = Make(writer_.get());
  const TrialSpec a = Request(*coordinator, 0);
  const TrialSpec b = Request(*coordinator, 1);
  Run(*coordinator, 0, a, 0.5);
  Run(*coordinator, 1, b, 0.6);
  const TrialSpec c = Request(*coordinator, 0);
  const TrialSpec d = Request(*coordinator, 1);
  // d reports its boundary (told to pause) but its pause has not arrived when c's does.
  std::vector<EpochMetrics> curve;
  for (int64_t epoch = 1; epoch <= 2; ++epoch) {
    ControlMessage report;
    report.kind = MessageKind::kEpochReport;
    report.trial_id = d.trial_id;
    report.metrics = Metrics(epoch, 0.1);
    curve.push_back(report.metrics);
    std::optional<ControlMessage> reply;
    ASSERT_TRUE(coordinator->Handle(1, report, &reply).ok());
    EXPECT_EQ(reply->keep_going, epoch < 2);
  }
  Run(*coordinator, 0, c, 0.7);
  EXPECT_TRUE(artifacts_.copies.empty()) << progress_.str();
  EXPECT_EQ(coordinator->trials_paused(), 3u);
  ControlMessage paused;
  paused.kind = MessageKind::kTrialResult;
  paused.result.trial_id = d.trial_id;
  paused.result.status = TrialStatus::kRunning;
  paused.result.params = d.params;
  paused.result.curve = curve;
  std::optional<ControlMessage> reply;
  const Status handled = coordinator->Handle(1, paused, &reply);
  ASSERT_TRUE(handled.ok()) << handled.message();
  ASSERT_EQ(artifacts_.copies.size(), 1u) << progress_.str();
  EXPECT_EQ(artifacts_.copies[0].second, 4);
  EXPECT_EQ(coordinator->trials_paused(), 0u);
  EXPECT_NE(progress_.str().find("trial " + std::to_string(d.trial_id) + " replaced by trial 4"),
            std::string::npos)
      << progress_.str();
  // The replaced member has its progress line, as every finished trial has.
  EXPECT_NE(progress_.str().find("trial " + std::to_string(d.trial_id) + " |"), std::string::npos)
      << progress_.str();
  EXPECT_NE(progress_.str().find("(stopped, "), std::string::npos) << progress_.str();
}

TEST_F(PbtCoordinatorTest, AMemberKilledAfterReportingItsBoundaryPausesThereOnResume) {
  std::unique_ptr<Coordinator> coordinator = Make(writer_.get());
  const TrialSpec a = Request(*coordinator, 0);
  const TrialSpec b = Request(*coordinator, 1);
  Run(*coordinator, 0, a, 0.5);
  Run(*coordinator, 1, b, 0.6);
  const TrialSpec c = Request(*coordinator, 0);
  const TrialSpec d = Request(*coordinator, 1);
  Run(*coordinator, 0, c, 0.7);
  for (int64_t epoch = 1; epoch <= 2; ++epoch) {  // d is told to pause; then kill -9
    ControlMessage report;
    report.kind = MessageKind::kEpochReport;
    report.trial_id = d.trial_id;
    report.metrics = Metrics(epoch, 0.1);
    std::optional<ControlMessage> reply;
    ASSERT_TRUE(coordinator->Handle(1, report, &reply).ok());
  }
  ASSERT_TRUE(coordinator->Publish().ok());
  EXPECT_TRUE(artifacts_.copies.empty());
  coordinator.reset();
  StudyContents study;
  ASSERT_TRUE(ReadStudy(path_, &study).ok());
  writer_.reset();
  std::unique_ptr<StudyWriter> reopened;
  ASSERT_TRUE(StudyWriter::Open(path_, layout_, &reopened).ok());
  std::unique_ptr<Coordinator> resumed = Make(reopened.get());
  ASSERT_TRUE(resumed->Restore(study).ok());
  // d pauses at epoch 2 from its reports, which completes the generation: d (the worst) goes.
  ASSERT_EQ(artifacts_.copies.size(), 1u) << progress_.str();
  EXPECT_EQ(artifacts_.copies[0].second, 4);
  EXPECT_NE(progress_.str().find("trial " + std::to_string(d.trial_id) + " replaced by trial 4"),
            std::string::npos)
      << progress_.str();
  std::set<int64_t> dispatched;
  for (int i = 0; i < 2; ++i) dispatched.insert(Request(*resumed, i).trial_id);
  EXPECT_EQ(dispatched.count(d.trial_id), 0u);
  reopened.reset();
  ASSERT_TRUE(ReadStudy(path_, &study).ok());
  for (const TrialResult& row : study.trials) {
    if (row.trial_id != d.trial_id) continue;
    EXPECT_EQ(row.status, TrialStatus::kStopped);
    ASSERT_EQ(row.curve.size(), 2u);  // its epochs, from the reports
    EXPECT_EQ(row.curve[1].epoch, 2);
  }
}

TEST_F(PbtCoordinatorTest, AFailedChildIsNotRetried) {
  config_.budget.trial_retries = 1;
  std::unique_ptr<Coordinator> coordinator = Make(writer_.get());
  for (int round = 0; round < 2; ++round) {
    const TrialSpec a = Request(*coordinator, 0);
    const TrialSpec b = Request(*coordinator, 1);
    Run(*coordinator, 0, a, 0.5 + 0.1 * static_cast<double>(a.trial_id));
    Run(*coordinator, 1, b, 0.5 + 0.1 * static_cast<double>(b.trial_id));
  }
  ASSERT_EQ(artifacts_.copies.size(), 1u);
  std::set<int64_t> dispatched;
  for (int i = 0; i < 4; ++i) {
    const TrialSpec trial = Request(*coordinator, 0);
    dispatched.insert(trial.trial_id);
    if (trial.parent_trial < 0) {
      Run(*coordinator, 0, trial, 0.5, 3);
      continue;
    }
    ControlMessage failed;
    failed.kind = MessageKind::kTrialResult;
    failed.result.trial_id = trial.trial_id;
    failed.result.status = TrialStatus::kFailed;
    failed.result.params = trial.params;
    failed.result.message = "boom";
    std::optional<ControlMessage> reply;
    ASSERT_TRUE(coordinator->Handle(0, failed, &reply).ok());
  }
  EXPECT_EQ(dispatched, (std::set<int64_t>{1, 2, 3, 4}));  // trial 0, the worst, was replaced
  EXPECT_EQ(progress_.str().find("retry"), std::string::npos) << progress_.str();
  EXPECT_EQ(coordinator->trials_finished(), 5);
}

TEST_F(PbtCoordinatorTest, ReplacesTheWorstMemberAndResumesWhereItWas) {
  std::unique_ptr<Coordinator> coordinator = Make(writer_.get());
  EXPECT_EQ(coordinator->planned_trials(), 5);  // 4 members, 1 replaced at epoch 2
  // Members 0..3 run to epoch 2 and pause; member 3 is the worst (accuracy base 0.1).
  const std::map<int64_t, double> base = {{0, 0.8}, {1, 0.5}, {2, 0.6}, {3, 0.1}};
  for (int round = 0; round < 2; ++round) {
    const TrialSpec a = Request(*coordinator, 0);
    const TrialSpec b = Request(*coordinator, 1);
    Run(*coordinator, 0, a, base.at(a.trial_id));
    Run(*coordinator, 1, b, base.at(b.trial_id));
  }
  EXPECT_NE(progress_.str().find("trial 3 replaced by trial 4 (from trial 0:"), std::string::npos)
      << progress_.str();
  ASSERT_EQ(artifacts_.copies, (std::vector<std::pair<int64_t, int64_t>>{{0, 4}}));
  EXPECT_EQ(coordinator->trials_paused(), 0u);
  EXPECT_EQ(coordinator->trials_finished(), 1);  // trial 3, stopped

  // kill -9 now: a new coordinator over the study as published.
  StudyContents study;
  ASSERT_TRUE(ReadStudy(path_, &study).ok());
  std::map<int64_t, TrialResult> rows;
  for (const TrialResult& row : study.trials) rows[row.trial_id] = row;
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows.at(3).status, TrialStatus::kStopped);
  EXPECT_NE(rows.at(3).message.find("replaced by trial 4"), std::string::npos);
  EXPECT_EQ(rows.at(3).parent_trial, -1);
  EXPECT_EQ(rows.at(0).status, TrialStatus::kPaused);
  writer_.reset();
  std::unique_ptr<StudyWriter> reopened;
  ASSERT_TRUE(StudyWriter::Open(path_, layout_, &reopened).ok());
  std::unique_ptr<Coordinator> resumed = Make(reopened.get());
  ASSERT_TRUE(resumed->Restore(study).ok());
  EXPECT_EQ(artifacts_.copies.size(), 1u);  // decided before: not decided again
  std::map<int64_t, TrialSpec> dispatched;
  for (int round = 0; round < 2; ++round) {
    const TrialSpec a = Request(*resumed, 0);
    const TrialSpec b = Request(*resumed, 1);
    dispatched[a.trial_id] = a;
    dispatched[b.trial_id] = b;
    Run(*resumed, 0, a, a.trial_id == 4 ? 0.9 : base.at(a.trial_id), 3);
    Run(*resumed, 1, b, b.trial_id == 4 ? 0.9 : base.at(b.trial_id), 3);
  }
  ASSERT_EQ(dispatched.size(), 4u);
  EXPECT_EQ(dispatched.count(3), 0u);
  EXPECT_EQ(dispatched.at(4).parent_trial, 0);
  EXPECT_EQ(dispatched.at(4).parent_epoch, 2);
  EXPECT_EQ(resumed->trials_finished(), 5);
  ASSERT_TRUE(resumed->Publish().ok());
  reopened.reset();

  ASSERT_TRUE(ReadStudy(path_, &study).ok());
  rows.clear();
  for (const TrialResult& row : study.trials) rows[row.trial_id] = row;
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows.at(4).status, TrialStatus::kCompleted);
  EXPECT_EQ(rows.at(4).parent_trial, 0);
  EXPECT_EQ(rows.at(4).parent_epoch, 2);
  EXPECT_EQ(rows.at(4).epochs, 2);
  // Every epoch once per trial: members 0..2 have 1..4, the child 3..4, the replaced 1..2.
  std::map<int64_t, std::vector<int64_t>> epochs;
  for (const auto& [id, row] : rows) {
    for (const EpochMetrics& m : row.curve) epochs[id].push_back(m.epoch);
  }
  EXPECT_EQ(epochs.at(0), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(epochs.at(3), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(epochs.at(4), (std::vector<int64_t>{3, 4}));
  ASSERT_TRUE(resumed->best_trial().has_value());
  EXPECT_EQ(resumed->best_trial()->trial_id, 4);
}

// The row of a member that population-based training stops is its last run's, the pause at the
// boundary: its dispatch time, duration and group (issue 52: 0 s on group -1), counted once.
TEST_F(PbtCoordinatorTest, AReplacedMemberKeepsTheTimeAndGroupOfItsLastRun) {
  std::unique_ptr<Coordinator> coordinator = Make(writer_.get());
  const std::map<int64_t, double> base = {{0, 0.8}, {1, 0.5}, {2, 0.6}, {3, 0.1}};
  std::map<int64_t, int> group_of;
  for (int round = 0; round < 2; ++round) {
    for (int group = 0; group < 2; ++group) {
      const TrialSpec trial = Request(*coordinator, group);
      group_of[trial.trial_id] = group;
      Run(*coordinator, group, trial, base.at(trial.trial_id));
    }
  }
  ASSERT_EQ(artifacts_.copies, (std::vector<std::pair<int64_t, int64_t>>{{0, 4}}));
  StudyContents study;
  ASSERT_TRUE(ReadStudy(path_, &study).ok());
  const auto replaced = std::find_if(study.trials.begin(), study.trials.end(),
                                     [](const TrialResult& row) { return row.trial_id == 3; });
  ASSERT_NE(replaced, study.trials.end());
  EXPECT_EQ(replaced->status, TrialStatus::kStopped);
  EXPECT_EQ(replaced->group, group_of.at(3));
  EXPECT_DOUBLE_EQ(replaced->duration_s, RunSeconds(3));
  EXPECT_TRUE(std::isfinite(replaced->start_time_s));
  EXPECT_EQ(study.earlier_spans.count(3), 0u);  // its paused row is the same run
}

// As above for a member that paused before a kill -9 and is replaced after --resume: its run is
// read back from its paused row in the study.
TEST_F(PbtCoordinatorTest, AMemberReplacedAfterResumeKeepsTheTimeAndGroupOfItsLastRun) {
  std::unique_ptr<Coordinator> coordinator = Make(writer_.get());
  const std::map<int64_t, double> base = {{0, 0.1}, {1, 0.5}, {2, 0.6}, {3, 0.8}};
  const TrialSpec first = Request(*coordinator, 1);  // trial 0, the worst, runs on group 1
  Run(*coordinator, 1, first, base.at(first.trial_id));
  for (int group = 0; group < 2; ++group) {
    const TrialSpec trial = Request(*coordinator, group);
    Run(*coordinator, group, trial, base.at(trial.trial_id));
  }
  Request(*coordinator, 0);  // trial 3 starts; then kill -9
  ASSERT_TRUE(coordinator->Publish().ok());
  coordinator.reset();
  StudyContents study;
  ASSERT_TRUE(ReadStudy(path_, &study).ok());
  double paused_at = 0.0;
  for (const TrialResult& row : study.trials) {
    if (row.trial_id == first.trial_id) paused_at = row.start_time_s;
  }
  writer_.reset();
  std::unique_ptr<StudyWriter> reopened;
  ASSERT_TRUE(StudyWriter::Open(path_, layout_, &reopened).ok());
  std::unique_ptr<Coordinator> resumed = Make(reopened.get());
  ASSERT_TRUE(resumed->Restore(study).ok());
  const TrialSpec last = Request(*resumed, 0);
  ASSERT_EQ(last.trial_id, 3);
  Run(*resumed, 0, last, base.at(last.trial_id));
  ASSERT_EQ(artifacts_.copies.size(), 1u) << progress_.str();
  ASSERT_TRUE(resumed->Publish().ok());
  reopened.reset();
  ASSERT_TRUE(ReadStudy(path_, &study).ok());
  const auto replaced = std::find_if(study.trials.begin(), study.trials.end(),
                                     [&](const TrialResult& row) { return row.trial_id == 0; });
  ASSERT_NE(replaced, study.trials.end());
  EXPECT_EQ(replaced->status, TrialStatus::kStopped);
  EXPECT_EQ(replaced->group, 1);
  EXPECT_DOUBLE_EQ(replaced->duration_s, RunSeconds(0));
  EXPECT_EQ(replaced->start_time_s, paused_at);
  EXPECT_EQ(study.earlier_spans.count(0), 0u);
}

// "1 member continues", not "1 members continue".
TEST_F(PbtCoordinatorTest, TheGenerationLineCountsOneContinuingMemberInTheSingular) {
  config_ = SweepConfig();
  ASSERT_TRUE(ParsePbtSweep(PbtSweepText("  population: 2\n  perturbation_interval: 2\n"
                                         "  mutations: [lr]\n"),
                            &config_)
                  .ok());
  std::unique_ptr<Coordinator> coordinator = Make(writer_.get());
  const TrialSpec a = Request(*coordinator, 0);
  const TrialSpec b = Request(*coordinator, 1);
  Run(*coordinator, 0, a, 0.5);
  Run(*coordinator, 1, b, 0.6);
  EXPECT_NE(progress_.str().find("); 1 member continues\n"), std::string::npos) << progress_.str();
  EXPECT_EQ(progress_.str().find("members continue"), std::string::npos) << progress_.str();
}

// The report's lineage: each child with its parent, epoch and the parameters explore changed.
TEST(PbtReportTest, TheLineageMarksAChildWhoseProgramStartedOver) {
  StudyContents study;
  study.attributes.metric_name = "val_accuracy";
  study.attributes.metric_goal = "maximize";
  study.layout.lineage = true;
  study.layout.params = {{"lr", ParamType::kFloat, 0, false}, {"width", ParamType::kInt, 0, false}};
  TrialResult parent;
  parent.trial_id = 0;
  parent.status = TrialStatus::kCompleted;
  parent.objective = 0.5;
  parent.params = Params(0.01, 16);
  TrialResult child = parent;
  child.trial_id = 1;
  child.params = Params(0.012, 16);
  child.parent_trial = 0;
  child.parent_epoch = 2;
  child.message = "restarted: its program reported step 1 first, not 3";
  study.trials = {parent, child};
  const std::string text = FormatReport(study, ReportOptions());
  EXPECT_NE(text.find("  trial 1 <- trial 0 at epoch 2: lr 0.01 -> 0.012 [restarted: its program "
                      "started over, not from the checkpoint]\n"),
            std::string::npos)
      << text;
  EXPECT_NE(FormatHtmlReport(study).find("lr 0.01 -&gt; 0.012 [restarted: its program started "
                                         "over]</td>"),
            std::string::npos);
}

TEST(PbtReportTest, EveryReportFormatListsTheLineage) {
  StudyContents study;
  study.attributes.metric_name = "val_accuracy";
  study.attributes.metric_goal = "maximize";
  study.layout.lineage = true;
  study.layout.params = {{"lr", ParamType::kFloat, 0, false}, {"width", ParamType::kInt, 0, false}};
  const auto row = [](int64_t id, TrialStatus status, double lr, int64_t parent, int64_t epoch) {
    TrialResult trial;
    trial.trial_id = id;
    trial.status = status;
    trial.objective = 0.5 + 0.01 * static_cast<double>(id);
    trial.params = Params(lr, 16);
    trial.epochs = 2;
    trial.parent_trial = parent;
    trial.parent_epoch = epoch;
    return trial;
  };
  study.trials = {row(0, TrialStatus::kCompleted, 0.01, -1, 0),
                  row(1, TrialStatus::kStopped, 0.02, -1, 0),
                  row(2, TrialStatus::kCompleted, 0.012, 0, 2)};
  ReportOptions options;
  const std::string text = FormatReport(study, options);
  EXPECT_NE(text.find("Lineage (population-based training)"), std::string::npos) << text;
  EXPECT_NE(text.find("  trial 2 <- trial 0 at epoch 2: lr 0.01 -> 0.012\n"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("trial 1 <-"), std::string::npos) << text;
  const std::string html = FormatHtmlReport(study);
  EXPECT_NE(html.find("<section id=\"lineage\">"), std::string::npos);
  EXPECT_NE(html.find("<tr><td>2</td><td>0</td><td>2</td><td>lr 0.01 -&gt; 0.012</td></tr>"),
            std::string::npos);
  // The tree: a line per trial, the best (2) and its ancestor (0) in red, trial 1 (replaced) with
  // a hollow dot, one dashed branch (2 from 0).
  const size_t tree = html.find("<svg class=\"lineage-tree\"");
  ASSERT_NE(tree, std::string::npos);
  const std::string svg = html.substr(tree, html.find("</svg>", tree) - tree);
  const auto count = [&svg](const std::string& what) {
    size_t n = 0;
    for (size_t at = svg.find(what); at != std::string::npos; at = svg.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("text-anchor=\"end\">trial "), 3u) << svg;
  EXPECT_EQ(count("stroke=\"#d62728\" stroke-width=\"3\""), 2u) << svg;
  EXPECT_EQ(count("fill=\"white\""), 1u) << svg;
  EXPECT_EQ(count("stroke-dasharray"), 1u) << svg;
  // CSV and JSON carry each trial's parent and epoch (empty / null for a drawn trial).
  options.format = ReportFormat::kCsv;
  const std::string csv = FormatReport(study, options);
  EXPECT_NE(csv.find(",message,parent_trial,parent_epoch\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n1,2,completed,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",,0,2\n"), std::string::npos) << csv;  // trial 2: empty message, parent 0
  EXPECT_NE(csv.find(",,,\n"), std::string::npos) << csv;    // trials 0 and 1: no parent
  options.format = ReportFormat::kJson;
  const std::string json = FormatReport(study, options);
  EXPECT_NE(json.find("\"trial_id\": 2, "), std::string::npos) << json;
  EXPECT_NE(json.find("\"message\": \"\", \"parent_trial\": 0, \"parent_epoch\": 2}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"parent_trial\": null, \"parent_epoch\": null}"), std::string::npos)
      << json;
  study.layout.lineage = false;  // a study without pbt has none of these
  EXPECT_EQ(FormatReport(study, options).find("parent_trial"), std::string::npos);
  options.format = ReportFormat::kCsv;
  EXPECT_EQ(FormatReport(study, options).find("parent_trial"), std::string::npos);
  options.format = ReportFormat::kTable;
  EXPECT_EQ(FormatReport(study, options).find("Lineage"), std::string::npos);
  EXPECT_EQ(FormatHtmlReport(study).find("id=\"lineage\""), std::string::npos);
}

}  // namespace
}  // namespace hpo
