// MetricReader: the three output formats (JSON object lines, name=value pairs, regex metric
// definitions), step numbering, pending values, NaN for missing columns, undeclared names, Create
// and CheckMetricDefinitions errors, and 100,000 mixed lines through one reader.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "program/metric_reader.hpp"

namespace hpo {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

MetricReader MakeReader(std::vector<std::string> columns, std::string objective,
                        const std::vector<MetricDefinition>& definitions = {}) {
  MetricReader reader;
  const Status status =
      MetricReader::Create(std::move(columns), std::move(objective), definitions, &reader);
  EXPECT_TRUE(status.ok()) << status.message();
  return reader;
}

// Reads `lines` and returns the steps they completed.
std::vector<EpochMetrics> ReadAll(MetricReader* reader, const std::vector<std::string>& lines) {
  std::vector<EpochMetrics> steps;
  for (const std::string& line : lines) reader->ReadLine(line, &steps);
  return steps;
}

std::vector<int64_t> Numbers(const std::vector<EpochMetrics>& steps) {
  std::vector<int64_t> numbers;
  for (const EpochMetrics& step : steps) numbers.push_back(step.epoch);
  return numbers;
}

// ---- JSON object lines ----

TEST(MetricReaderJson, TopLevelNumbersAreMetrics) {
  MetricReader reader = MakeReader({"loss", "acc", "lr"}, "loss");
  const auto steps = ReadAll(&reader, {R"({"acc": 0.9, "loss": 1, "lr": 2.5e-4})"});
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].epoch, 1);
  EXPECT_EQ(steps[0].values, (std::vector<double>{1.0, 0.9, 2.5e-4}));
  EXPECT_TRUE(reader.undeclared().empty());
  EXPECT_EQ(reader.last_step(), 1);
}

TEST(MetricReaderJson, CompactSpacedAndNegativeNumbers) {
  MetricReader reader = MakeReader({"a", "b", "c", "d"}, "a");
  const auto steps =
      ReadAll(&reader, {"  \t{\"a\":-0.5,\"b\" :  -12 , \"c\":1E+3,\"d\":0e-2}  \r"});
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].values, (std::vector<double>{-0.5, -12.0, 1000.0, 0.0}));
}

TEST(MetricReaderJson, PythonNonFiniteSpellings) {
  MetricReader reader = MakeReader({"loss", "up", "down"}, "loss");
  const auto steps = ReadAll(&reader, {R"({"loss": NaN, "up": Infinity, "down": -Infinity})"});
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_TRUE(std::isnan(steps[0].values[0]));
  EXPECT_EQ(steps[0].values[1], kInfinity);
  EXPECT_EQ(steps[0].values[2], -kInfinity);
}

TEST(MetricReaderJson, NonNumbersAreIgnored) {
  MetricReader reader = MakeReader({"loss", "flag", "name", "none", "list", "nested"}, "loss");
  const auto steps = ReadAll(
      &reader, {R"({"loss": 0.25, "flag": true, "name": "1.5", "none": null, "list": [1, 2],)"
                R"( "nested": {"loss": 9, "x": {"y": [NaN]}}})"});
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].values[0], 0.25);
  for (size_t i = 1; i < steps[0].values.size(); ++i) {
    EXPECT_TRUE(std::isnan(steps[0].values[i])) << i;
  }
  EXPECT_TRUE(reader.undeclared().empty());  // only top-level numbers report
}

TEST(MetricReaderJson, KeysWithPunctuationAndEscapes) {
  MetricReader reader = MakeReader({"Eval|hits@10", "val/loss", "a\"b", "caf\xC3\xA9"}, "val/loss");
  const auto steps =
      ReadAll(&reader, {R"({"Eval|hits@10": 0.7, "val\/loss": 0.3, "a\"b": 1, "caf\u00e9": 2})"});
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].values, (std::vector<double>{0.7, 0.3, 1.0, 2.0}));
}

TEST(MetricReaderJson, BooleanObjectiveMakesNoStep) {
  MetricReader reader = MakeReader({"loss"}, "loss");
  EXPECT_TRUE(ReadAll(&reader, {R"({"loss": false})", R"({"loss": "0.1"})"}).empty());
}

TEST(MetricReaderJson, NeitherJsonNorAPythonDictFallsBackToPlainText) {
  MetricReader reader = MakeReader({"loss", "acc"}, "loss");
  // Neither JSON nor a printed Python dict: unquoted keys, leading zero, '+', no ':', ...
  const std::vector<std::string> invalid = {
      "{loss: 0.5}",
      R"({"loss": 05})",
      R"({"loss": +5})",
      R"({"loss": 1} {})",
      R"({"loss": .5})",
      R"({"loss" 1})",
      R"({"loss": [1, 2})",
      R"({"lo)"
      "\x01"
      R"(ss": 1})",
      R"({"loss": 1e})",
      R"({"loss": "\x"})",
      R"({"loss": "\u12"})",
  };
  EXPECT_TRUE(ReadAll(&reader, invalid).empty());
  // Each was counted as unreadable, the first one kept with why.
  EXPECT_EQ(reader.unreadable_lines(), static_cast<int64_t>(invalid.size()));
  EXPECT_EQ(reader.first_unreadable().line, 1);
  EXPECT_EQ(reader.first_unreadable().text, "{loss: 0.5}");
  EXPECT_EQ(reader.first_unreadable().why, "a key is not a string");
  // ... and as plain text its name=value pairs count.
  const auto steps = ReadAll(&reader, {"{acc=0.9, loss=0.5}"});
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].values, (std::vector<double>{0.5, 0.9}));
  EXPECT_TRUE(reader.undeclared().empty());
}

// ---- printed Python dicts (Hugging Face's Trainer, Lightning) ----

TEST(MetricReaderPython, HuggingFaceTrainerLogAsItPrintsIt) {
  // What Trainer(..., eval_strategy="epoch", logging_steps=...) prints over 3 epochs, then
  // trainer.log_metrics("eval", ...)'s closing summary.
  MetricReader reader = MakeReader({"eval_loss", "eval_accuracy", "loss"}, "eval_accuracy");
  const auto steps = ReadAll(
      &reader,
      {"{'loss': 0.6931, 'grad_norm': 1.2345678, 'learning_rate': 4.5e-05, 'epoch': 0.5}",
       "{'eval_loss': 0.52, 'eval_accuracy': 0.81, 'eval_runtime': 1.234, "
       "'eval_samples_per_second': 405.2, 'eval_steps_per_second': 12.97, 'epoch': 1.0}",
       "{'loss': 0.4012, 'grad_norm': 2.5, 'learning_rate': 2.5e-05, 'epoch': 1.5}",
       "{'eval_loss': 0.47, 'eval_accuracy': 0.84, 'eval_runtime': 1.1, 'epoch': 2.0}",
       "{'eval_loss': 0.45, 'eval_accuracy': 0.86, 'eval_runtime': 1.1, 'epoch': 3.0}",
       "{'train_runtime': 61.2, 'train_samples_per_second': 98.1, 'train_steps_per_second': 3.1, "
       "'train_loss': 0.41, 'epoch': 3.0}",
       "***** eval metrics *****", "  epoch                   =        3.0",
       "  eval_accuracy           =       0.86", "  eval_loss               =       0.45"});
  ASSERT_EQ(Numbers(steps), (std::vector<int64_t>{1, 2, 3}));  // the summary repeats epoch 3
  EXPECT_EQ(steps[0].values, (std::vector<double>{0.52, 0.81, 0.6931}));
  EXPECT_EQ(steps[2].values[1], 0.86);
  EXPECT_EQ(reader.unreadable_lines(), 0);
  EXPECT_EQ(reader.undeclared().count("eval_runtime"), 1u);
}

TEST(MetricReaderPython, TransformersFivePrintsItsFloatsAsStrings) {
  // Trainer's PrinterCallback in transformers 5.24 (disable_tqdm=True), eval_steps=0.5 of one
  // epoch, as configs/programs/finetune_text_classifier.py printed it: f"{v:.4g}" strings.
  MetricReader reader = MakeReader({"eval_loss", "eval_accuracy", "train_loss"}, "eval_accuracy");
  const auto steps = ReadAll(
      &reader,
      {"{'eval_loss': '2.992', 'eval_accuracy': '0.06211', 'eval_macro_f1': '0.01919', "
       "'eval_runtime': '9.094', 'eval_samples_per_second': '123.9', 'epoch': '0.5'}",
       "{'eval_loss': '2.991', 'eval_accuracy': '0.1242', 'eval_runtime': '9.053', 'epoch': '1'}",
       "{'train_runtime': '20.13', 'train_loss': '2.994', 'epoch': '1'}",
       "{'model': 'bert', 'note': '1.5 epochs', 'eval_accuracy': '1.235e-01x'}"});
  ASSERT_EQ(Numbers(steps), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(steps[0].values[0], 2.992);
  EXPECT_EQ(steps[0].values[1], 0.06211);
  EXPECT_TRUE(std::isnan(steps[0].values[2]));  // train_loss comes after the last evaluation
  EXPECT_EQ(steps[1].values[1], 0.1242);
  EXPECT_EQ(reader.unreadable_lines(), 0);
  EXPECT_EQ(reader.undeclared().count("eval_macro_f1"), 1u);
  EXPECT_EQ(reader.undeclared().count("note"), 0u);
}

// A Trainer evaluating at every quarter epoch, paused after its third evaluation and resumed from
// its checkpoint: its first evaluation now is the fourth step, not the first, whatever its
// `epoch` looks like; one resumed from the checkpoint before goes on from the third.
TEST(MetricReaderPython, AResumedTrainerNumbersItsStepsFromItsFractionalEpochs) {
  const std::vector<double> earlier = {0.25, 0.5, 0.75};
  MetricReader fresh = MakeReader({"eval_f1"}, "eval_f1");
  const auto first =
      ReadAll(&fresh, {"{'eval_f1': '0.5', 'epoch': '0.25'}", "{'loss': '0.7', 'epoch': '0.4'}",
                       "{'eval_f1': '0.6', 'epoch': '0.5'}"});
  EXPECT_EQ(Numbers(first), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(fresh.epoch_key(1), 0.25);
  EXPECT_EQ(fresh.epoch_key(2), 0.5);
  EXPECT_TRUE(std::isnan(fresh.epoch_key(3)));

  MetricReader resumed = MakeReader({"eval_f1"}, "eval_f1");
  resumed.ContinueFrom(earlier);
  const auto after_pause = ReadAll(
      &resumed, {"{'eval_f1': '0.8', 'epoch': '1'}", "{'eval_f1': '0.81', 'epoch': '1.25'}"});
  EXPECT_EQ(Numbers(after_pause), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(resumed.epoch_key(4), 1.0);

  MetricReader one_back = MakeReader({"eval_f1"}, "eval_f1");
  one_back.ContinueFrom(earlier);
  EXPECT_EQ(Numbers(ReadAll(&one_back, {"{'eval_f1': '0.7', 'epoch': '0.75'}"})),
            (std::vector<int64_t>{3}));

  MetricReader started_over = MakeReader({"eval_f1"}, "eval_f1");
  started_over.ContinueFrom(earlier);
  EXPECT_EQ(Numbers(ReadAll(&started_over, {"{'eval_f1': '0.5', 'epoch': '0.25'}"})),
            (std::vector<int64_t>{1}));
}

// Whole epochs and counters keep their own numbers on resume, as before.
TEST(MetricReaderPython, WholeEpochKeysAndCountersKeepTheirNumbersOnResume) {
  MetricReader epochs = MakeReader({"acc"}, "acc");
  epochs.ContinueFrom({1.0, 2.0});
  EXPECT_EQ(Numbers(ReadAll(&epochs, {"{'acc': 0.9, 'epoch': 3}"})), (std::vector<int64_t>{3}));
  MetricReader counter = MakeReader({"acc"}, "acc");
  counter.ContinueFrom({std::nan(""), std::nan("")});
  EXPECT_EQ(Numbers(ReadAll(&counter, {"{\"acc\": 0.9, \"_step\": 100}"})),
            (std::vector<int64_t>{100}));
}

TEST(MetricReaderPython, LightningTensorsNumpyScalarsAndOtherValues) {
  MetricReader reader = MakeReader({"val_loss", "val_acc", "lr", "val/f1"}, "val_loss");
  const auto steps = ReadAll(
      &reader, {"{'val_acc': tensor(0.8100, device='cuda:0'), 'lr': np.float64(0.001), "
                "'val/f1': torch.tensor(7), 'name': \"run 'a'\", 'flag': True, 'none': None, "
                "'dtype': torch.float32, 'hist': [1, (2, 3), {'x': 4}], 'cm': tensor([[1, 2]]), "
                "'val_loss': tensor(0.5123)}"});
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].values, (std::vector<double>{0.5123, 0.81, 0.001, 7.0}));
  EXPECT_EQ(reader.undeclared(), (std::set<std::string>{}));
}

TEST(MetricReaderPython, ReprNumbersEscapesAndSpellings) {
  MetricReader reader = MakeReader({"a", "b", "c", "d", "e\n'f", "g"}, "a");
  const auto steps = ReadAll(&reader, {"{'a': 1e-05, \"b\": -2, 'c': nan, 'd': -inf, "
                                       "'e\\n\\'f': 1., 'g': 3,}"});
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].values[0], 1e-05);
  EXPECT_EQ(steps[0].values[1], -2.0);
  EXPECT_TRUE(std::isnan(steps[0].values[2]));
  EXPECT_EQ(steps[0].values[3], -kInfinity);
  EXPECT_EQ(steps[0].values[4], 1.0);
  EXPECT_EQ(steps[0].values[5], 3.0);
}

TEST(MetricReaderPython, AnOddValueMakesTheLineUnreadableNotSilent) {
  MetricReader reader = MakeReader({"loss"}, "loss");
  const auto steps = ReadAll(&reader, {"starting", "{'loss': <object at 0x7f3a>}",
                                       "{'loss': 0.5, 'x': [1, 2}", "{'loss': 0.4}"});
  EXPECT_EQ(Numbers(steps), (std::vector<int64_t>{1}));
  EXPECT_EQ(reader.unreadable_lines(), 2);
  EXPECT_EQ(reader.first_unreadable().line, 2);
  EXPECT_EQ(reader.first_unreadable().why, "the value of 'loss' is not a Python literal");
}

TEST(MetricReaderJson, DeepNestingIsPlainText) {
  MetricReader reader = MakeReader({"loss"}, "loss");
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_TRUE(ReadAll(&reader, {R"({"loss": 1, "x": )" + deep + "}"}).empty());
  const std::string shallow = std::string(60, '[') + std::string(60, ']');
  EXPECT_EQ(ReadAll(&reader, {R"({"loss": 1, "x": )" + shallow + "}"}).size(), 1u);
}

TEST(MetricReaderJson, UndeclaredNamesAreRememberedSorted) {
  MetricReader reader = MakeReader({"loss"}, "loss");
  const auto steps = ReadAll(&reader, {R"({"lr": 0.1, "zeta": 1, "_step": 4})",
                                       R"({"grad_norm": 3, "lr": 0.2})", R"({"loss": 1})"});
  EXPECT_EQ(reader.undeclared(), (std::set<std::string>{"grad_norm", "lr", "zeta"}));
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].epoch, 4);  // _step is a step key, not an undeclared name
}

// ---- name=value pairs ----

TEST(MetricReaderPairs, KatibExamples) {
  MetricReader reader = MakeReader({"loss", "accuracy"}, "accuracy");
  const auto steps = ReadAll(&reader, {"epoch 3: loss=0.31, accuracy=0.9",
                                       "2024-01-01 12:00:00 INFO accuracy=0.95 loss=0.25"});
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].values, (std::vector<double>{0.31, 0.9}));
  EXPECT_EQ(steps[1].values, (std::vector<double>{0.25, 0.95}));
}

TEST(MetricReaderPairs, SpacesAroundEqualsAndCommas) {
  MetricReader reader = MakeReader({"a", "b", "val_loss"}, "val_loss");
  const auto steps = ReadAll(&reader, {"a=1,b=2", "val_loss = 0.2", "val_loss\t=\t-3e-2;"});
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].values, (std::vector<double>{1.0, 2.0, 0.2}));
  EXPECT_TRUE(std::isnan(steps[1].values[0]));
  EXPECT_EQ(steps[1].values[2], -0.03);
}

TEST(MetricReaderPairs, NumberForms) {
  MetricReader reader = MakeReader({"x", "loss"}, "loss");
  const std::vector<std::pair<std::string, double>> cases = {
      {"loss=7", 7.0},         {"loss=+7", 7.0},
      {"loss=.5", 0.5},        {"loss=5.", 5.0},
      {"loss=1.5E3", 1500.0},  {"loss=2e-3", 0.002},
      {"loss=inf", kInfinity}, {"loss=-Infinity", -kInfinity},
      {"loss=0.9%", 0.9},      {"(loss=0.25)", 0.25},
      {"loss=1.5.", 1.5},
  };
  for (const auto& [line, expected] : cases) {
    const auto steps = ReadAll(&reader, {line});
    ASSERT_EQ(steps.size(), 1u) << line;
    EXPECT_EQ(steps[0].values[1], expected) << line;
  }
  for (const char* line : {"loss=nan", "loss=NaN", "loss=NAN", "loss=-nan"}) {
    const auto steps = ReadAll(&reader, {line});
    ASSERT_EQ(steps.size(), 1u) << line;
    EXPECT_TRUE(std::isnan(steps[0].values[1])) << line;
  }
}

TEST(MetricReaderPairs, NotAPair) {
  MetricReader reader = MakeReader({"loss"}, "loss");
  // Units, versions, words, hex, missing values, comparisons, names glued to other names.
  const std::vector<std::string> lines = {
      "loss=3.2s",  "loss=1.2.3", "loss=nano", "loss=0x10", "loss=",   "loss= ",
      "loss==1",    "loss>=1",    "xloss=1",   "my-loss=1", "2loss=1", "loss=e5",
      "loss=1e999", "loss=abc",   "loss=-",    "loss=.",
  };
  EXPECT_TRUE(ReadAll(&reader, lines).empty());
  EXPECT_TRUE(reader.undeclared().empty());
}

TEST(MetricReaderPairs, NamesThatAreNotColumnsAreNoise) {
  MetricReader reader = MakeReader({"loss"}, "loss");
  const auto steps =
      ReadAll(&reader, {"Namespace(lr=0.01, batch_size=64)", "step 5 lr=0.001 loss=0.4"});
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].values, (std::vector<double>{0.4}));
  EXPECT_EQ(steps[0].epoch, 1);  // "step 5" is not a pair; no step key: the first step
  EXPECT_TRUE(reader.undeclared().empty());
}

TEST(MetricReaderPairs, NamesWithPunctuation) {
  MetricReader reader = MakeReader({"Eval|hits@10", "val/loss", "train.loss-avg"}, "val/loss");
  const auto steps = ReadAll(&reader, {"Eval|hits@10=0.7 train.loss-avg=2 | val/loss=0.3"});
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].values, (std::vector<double>{0.7, 0.3, 2.0}));
}

// ---- metric definitions ----

TEST(MetricReaderDefinitions, SageMakerExamples) {
  MetricReader reader = MakeReader(
      {"validation:accuracy", "train:loss"}, "validation:accuracy",
      {{"validation:accuracy", "val_acc: ([0-9\\.]+)"}, {"train:loss", "loss = (\\S+?);"}});
  const auto steps = ReadAll(&reader, {"Train: loss = 0.5; time 3s", "Epoch 1 val_acc: 0.81"});
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].values, (std::vector<double>{0.81, 0.5}));
}

TEST(MetricReaderDefinitions, EveryMatchOnALineReportsAndTheLastWins) {
  MetricReader reader =
      MakeReader({"acc", "count"}, "acc", {{"acc", "acc: ([-0-9.e]+)"}, {"count", "#(\\d+)"}});
  const auto steps = ReadAll(&reader, {"#1 acc: 0.1 #2 acc: 0.2 #3 acc: 0.3"});
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].values, (std::vector<double>{0.3, 3.0}));
}

TEST(MetricReaderDefinitions, GroupThatIsNotANumberIsIgnored) {
  MetricReader reader = MakeReader({"acc"}, "acc", {{"acc", "acc: (\\S*)"}});
  EXPECT_TRUE(ReadAll(&reader, {"acc: n/a", "acc: 0.5.", "acc: ", "acc: 1e"}).empty());
  const auto steps = ReadAll(&reader, {"acc: high acc: 0.75"});
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].values[0], 0.75);
}

TEST(MetricReaderDefinitions, ApplyToJsonAndPairLinesToo) {
  MetricReader reader = MakeReader({"loss", "acc"}, "acc",
                                   {{"acc", "\"accuracy\": ([0-9.]+)"}, {"acc", "A=(\\d+)%"}});
  auto steps = ReadAll(&reader, {R"({"loss": 0.5, "accuracy": 0.8})"});
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].values, (std::vector<double>{0.5, 0.8}));
  EXPECT_EQ(reader.undeclared(), (std::set<std::string>{"accuracy"}));
  steps = ReadAll(&reader, {"loss=0.4 A=93%"});
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].values, (std::vector<double>{0.4, 93.0}));
}

TEST(MetricReaderDefinitions, ProgressBarPartsAreSearchedAndHugeLinesAreSafe) {
  MetricReader reader = MakeReader({"loss"}, "loss", {{"loss", "^.*loss: ([0-9.]+)$"}});
  auto steps = ReadAll(&reader, {"10%|# | loss: 0.9\r50%|### | loss: 0.5\r100%|#####| loss: 0.2"});
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].values[0], 0.2);
  // A 1 MiB line (the longest ChildProcess emits) would overflow std::regex's recursion.
  steps = ReadAll(&reader, {std::string(1 << 20, 'x') + " loss: 0.1"});
  EXPECT_TRUE(steps.empty());
}

TEST(MetricReaderDefinitions, NamesThatAreNotColumnsAreUndeclared) {
  MetricReader reader = MakeReader({"loss"}, "loss", {{"gpu_mem", "mem=(\\d+)MB"}});
  EXPECT_TRUE(ReadAll(&reader, {"mem=512MB"}).empty());
  EXPECT_EQ(reader.undeclared(), (std::set<std::string>{"gpu_mem"}));
}

// ---- steps ----

TEST(MetricReaderSteps, UnnumberedStepsCountFromOne) {
  MetricReader reader = MakeReader({"loss"}, "loss");
  EXPECT_EQ(reader.last_step(), 0);
  const auto steps = ReadAll(&reader, {"loss=3", "loss=2", R"({"loss": 1})"});
  EXPECT_EQ(Numbers(steps), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(reader.last_step(), 3);
}

TEST(MetricReaderSteps, NumberedByEachStepKey) {
  MetricReader reader = MakeReader({"loss"}, "loss");
  const auto steps = ReadAll(&reader, {"epoch=2 loss=1", R"({"step": 5, "loss": 1})",
                                       R"({"loss": 1, "_step": 9})", "_step = 12, loss=1"});
  EXPECT_EQ(Numbers(steps), (std::vector<int64_t>{2, 5, 9, 12}));
}

TEST(MetricReaderSteps, ZeroBasedProgramsBecomeOneBased) {
  MetricReader reader = MakeReader({"loss"}, "loss");
  const auto steps =
      ReadAll(&reader, {"epoch=0 loss=1", "epoch=1 loss=1", "epoch=2 loss=1", "epoch=5 loss=1"});
  EXPECT_EQ(Numbers(steps), (std::vector<int64_t>{1, 2, 3, 5}));
}

TEST(MetricReaderSteps, NumbersOnlyIncrease) {
  MetricReader reader = MakeReader({"loss"}, "loss");
  const auto steps = ReadAll(&reader, {"epoch=10 loss=1", "epoch=4 loss=1", "epoch=10 loss=1",
                                       "epoch=-3 loss=1", "epoch=13 loss=1", "loss=1"});
  EXPECT_EQ(Numbers(steps), (std::vector<int64_t>{10, 11, 12, 13, 14, 15}));
}

TEST(MetricReaderSteps, StepKeyFromAnEarlierLineAndNonIntegersIgnored) {
  MetricReader reader = MakeReader({"loss"}, "loss");
  const auto steps = ReadAll(&reader, {"Epoch: epoch=7", "loss=1", R"({"epoch": 2.5})",
                                       R"({"epoch": Infinity})", "loss=1"});
  EXPECT_EQ(Numbers(steps), (std::vector<int64_t>{7, 8}));
  // The step key a step used is gone afterwards.
  EXPECT_EQ(Numbers(ReadAll(&reader, {"loss=1"})), (std::vector<int64_t>{9}));
}

TEST(MetricReaderSteps, StepKeysAreNotMetrics) {
  MetricReader reader = MakeReader({"loss"}, "loss");
  ReadAll(&reader, {R"({"epoch": 1, "step": 2, "_step": 3, "loss": 1})"});
  EXPECT_TRUE(reader.undeclared().empty());
}

TEST(MetricReaderSteps, PendingValuesJoinTheNextObjectiveReport) {
  MetricReader reader = MakeReader({"train_loss", "val_loss", "val_acc"}, "val_loss");
  const auto steps = ReadAll(&reader, {
                                          "train_loss=0.9",
                                          "train_loss=0.8",  // the latest value wins
                                          "val_acc=0.7", "val_loss=0.6",
                                          "val_loss=0.5",  // a new step: nothing else pending
                                      });
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].values, (std::vector<double>{0.8, 0.6, 0.7}));
  EXPECT_TRUE(std::isnan(steps[1].values[0]));
  EXPECT_EQ(steps[1].values[1], 0.5);
  EXPECT_TRUE(std::isnan(steps[1].values[2]));
}

TEST(MetricReaderSteps, TheSameExplicitStepKeyAgainRepeatsTheLastStep) {
  MetricReader reader = MakeReader({"loss"}, "loss");
  const auto steps = ReadAll(&reader, {"epoch=1 loss=3", "epoch=1 loss=2", "epoch=2 loss=1",
                                       "loss=0.5", "loss=0.4", "epoch=0 loss=0.3"});
  // The second epoch-1 line repeats step 1; unnumbered lines never repeat.
  EXPECT_EQ(Numbers(steps), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(steps[0].values[0], 3.0);
}

TEST(MetricReaderSteps, OneStepPerLineEvenWhenTheObjectiveRepeats) {
  MetricReader reader = MakeReader({"loss"}, "loss", {{"loss", "loss=([0-9.]+)"}});
  const auto steps = ReadAll(&reader, {"loss=1 loss=2"});
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].values[0], 2.0);
}

TEST(MetricReaderSteps, CopiesReadOnTheirOwn) {
  MetricReader reader = MakeReader({"loss"}, "loss", {{"loss", "L: ([0-9.]+)"}});
  ReadAll(&reader, {"L: 1"});
  MetricReader copy = reader;
  MetricReader moved = std::move(reader);
  EXPECT_EQ(Numbers(ReadAll(&copy, {"L: 2"})), (std::vector<int64_t>{2}));
  EXPECT_EQ(Numbers(ReadAll(&moved, {"L: 2", "L: 3"})), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(copy.last_step(), 2);
}

TEST(MetricReaderSteps, DefaultConstructedReaderMakesNoSteps) {
  MetricReader reader;
  EXPECT_TRUE(ReadAll(&reader, {R"({"loss": 1})", "loss=1"}).empty());
  EXPECT_EQ(reader.last_step(), 0);
}

// ---- Create and CheckMetricDefinitions ----

TEST(MetricReaderCreate, ObjectiveMustBeAColumn) {
  MetricReader reader;
  const Status status = MetricReader::Create({"loss"}, "acc", {}, &reader);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find("'acc'"), std::string::npos) << status.message();
}

TEST(MetricReaderCreate, ColumnsMustBeDistinct) {
  MetricReader reader;
  const Status status = MetricReader::Create({"loss", "acc", "loss"}, "loss", {}, &reader);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find("'loss' is listed twice"), std::string::npos) << status.message();
}

TEST(MetricReaderCreate, BadRegex) {
  MetricReader reader;
  const Status status =
      MetricReader::Create({"loss"}, "loss", {{"loss", "l=(\\d+)"}, {"loss", "l=([0-9+"}}, &reader);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message().rfind("metric_definitions[1].regex: 'l=([0-9+' is not a regular "
                                   "expression: ",
                                   0),
            0u)
      << status.message();
  EXPECT_EQ(CheckMetricDefinitions({{"loss", "("}}).code(), Status::Code::kBadInput);
}

// libstdc++ copies a repeated atom once per count (a count in the millions exhausts memory) and
// overflows its counter on a number near 2^63 (found by fuzz_config): such counts and
// backreferences are refused before std::regex sees them; ordinary ones still compile.
TEST(MetricReaderCreate, HugeRepetitionsAndBackreferencesAreRefused) {
  for (const char* regex : {"loss=(\\d{1,99999999})", "loss=(\\d{1001})", "(l)=(\\d)\\1001",
                            "(l)(\\.\\9223372036854775808)"}) {
    const Status status = CheckMetricDefinitions({{"loss", regex}});
    EXPECT_EQ(status.message(), std::string("metric_definitions[0].regex: '") + regex +
                                    "' is not a regular expression: a repetition count or "
                                    "backreference is over 1000");
  }
  EXPECT_TRUE(CheckMetricDefinitions({{"loss", "loss=(\\d{1,1000})[{99999}]\\{99999\\}"}}).ok());
  EXPECT_TRUE(CheckMetricDefinitions({{"loss", "(l)=(\\d+)\\1"}}).ok());
}

TEST(MetricReaderCreate, NoCaptureGroup) {
  const Status status = CheckMetricDefinitions({{"loss", "loss: (?:[0-9.]+)"}});
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message(),
            "metric_definitions[0].regex: 'loss: (?:[0-9.]+)' has no capture group (the value is "
            "the first group)");
  MetricReader reader;
  EXPECT_FALSE(MetricReader::Create({"loss"}, "loss", {{"loss", "loss"}}, &reader).ok());
}

TEST(MetricReaderCreate, GoodDefinitions) {
  EXPECT_TRUE(CheckMetricDefinitions({}).ok());
  EXPECT_TRUE(CheckMetricDefinitions({{"a", "a=(\\d+)"}, {"b", "(b)(\\d)"}}).ok());
}

// ---- throughput ----

TEST(MetricReaderThroughput, HundredThousandMixedLines) {
  MetricReader reader = MakeReader({"train_loss", "val_loss", "val_acc"}, "val_loss",
                                   {{"val_acc", "val_acc: ([0-9.]+)"}});
  std::vector<EpochMetrics> steps;
  const int kLines = 100000;
  for (int i = 0; i < kLines; ++i) {
    const std::string n = std::to_string(i);
    switch (i % 5) {
      case 0:
        reader.ReadLine("Epoch " + n + " batch 17/200 lr=0.001 train_loss=0." + n, &steps);
        break;
      case 1:
        reader.ReadLine(R"({"train_loss": 0.5, "grad_norm": 1.25, "_step": )" + n + "}", &steps);
        break;
      case 2:
        reader.ReadLine("some log line without metrics " + n, &steps);
        break;
      case 3:
        reader.ReadLine("val_acc: 0." + n + " (best so far)", &steps);
        break;
      default:
        reader.ReadLine(R"({"val_loss": 0.)" + n + R"(, "epoch": )" + n + "}", &steps);
        break;
    }
  }
  ASSERT_EQ(steps.size(), static_cast<size_t>(kLines / 5));
  EXPECT_EQ(steps.back().epoch, kLines - 1);
  EXPECT_FALSE(std::isnan(steps.back().values[0]));
  EXPECT_FALSE(std::isnan(steps.back().values[2]));
  EXPECT_EQ(reader.undeclared(), (std::set<std::string>{"grad_norm"}));
}

}  // namespace
}  // namespace hpo
