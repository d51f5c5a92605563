#include "tasks/text_classification/model_runtime/text_classification_task.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/task_catalog.hpp"

namespace hpo {
namespace {

namespace fs = std::filesystem;

// A folder of small TSV splits and the config naming them, removed at the end of the test. The
// test runs in that folder, since the config's relative paths are taken from where hpo runs.
class TextTaskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() /
              ("hpo-text-task-" + std::to_string(::getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(folder_);
    previous_folder_ = fs::current_path();
    fs::current_path(folder_);
    Write("train.tsv",
          "text\tlabel\n"
          "good movie\tpos\n"
          "bad movie\tneg\n"
          "good good fun\tpos\n"
          "bad plot, bad acting\tneg\n"
          "a good one\tpos\n"
          "so bad\tneg\n"
          "good\tpos\n"
          "bad\tneg\n"
          "fun fun fun\tpos\n"
          "dull\tneg\n");
    Write("test.tsv", "text\tlabel\ngood fun\tpos\nbad\tneg\n");
  }
  void TearDown() override {
    fs::current_path(previous_folder_);
    fs::remove_all(folder_);
  }

  void Write(const std::string& name, const std::string& text) {
    std::ofstream(folder_ / name, std::ios::binary) << text;
  }

  // Parses a text_classification config with `parameters` under sweep.parameters and `text`
  // lines under text:.
  Status Parse(const std::string& parameters, const std::string& text, SweepConfig* config) {
    const std::string yaml =
        "sweep:\n"
        "  method: random\n"
        "  metric: {name: val_accuracy, goal: maximize}\n"
        "  run_cap: 1\n"
        "  parameters:\n"
        "    lr: {value: 0.01}\n" +
        parameters +
        "task: text_classification\n"
        "text:\n" +
        text + "epochs: 1\n";
    const std::string path = (folder_ / "sweep.yaml").string();
    std::ofstream(path) << yaml;
    return ParseConfig(yaml, path, config);
  }

  Status Make(const std::string& parameters, const std::string& text,
              std::unique_ptr<ModelTask>* task) {
    SweepConfig config;
    HPO_RETURN_IF_ERROR(Parse(parameters, text, &config));
    return TextClassificationTask::Make(config, task);
  }

  fs::path folder_;
  fs::path previous_folder_;
};

constexpr char kSplits[] = "  train: train.tsv\n  test: test.tsv\n";

TEST_F(TextTaskTest, BatchesStartWithClsAndArePaddedToTheirLongestRow) {
  std::unique_ptr<ModelTask> task;
  ASSERT_TRUE(Make("", kSplits, &task).ok());
  EXPECT_EQ(task->train_data().size(), 9);  // one of ten rows carved for validation
  EXPECT_EQ(task->validation_data().size(), 1);
  ASSERT_NE(task->test_data(), nullptr);
  const Batch batch = task->test_data()->Gather(torch::tensor({1, 0}, torch::kInt64));
  ASSERT_EQ(batch.inputs.size(), 1u);
  const torch::Tensor tokens = batch.inputs[0];
  ASSERT_EQ(tokens.sizes(), (std::vector<int64_t>{2, 3}));  // [CLS] good fun; [CLS] bad [PAD]
  EXPECT_EQ(tokens[0][0].item<int64_t>(), Vocabulary::kClsId);
  EXPECT_EQ(tokens[1][0].item<int64_t>(), Vocabulary::kClsId);
  EXPECT_EQ(tokens[0][2].item<int64_t>(), Vocabulary::kPadId);
  EXPECT_NE(tokens[1][2].item<int64_t>(), Vocabulary::kPadId);
  // Classes sorted: neg = 0, pos = 1.
  EXPECT_EQ(batch.targets[0].item<int64_t>(), 0);
  EXPECT_EQ(batch.targets[1].item<int64_t>(), 1);
}

TEST_F(TextTaskTest, LogitsDoNotDependOnPaddingForEitherPooling) {
  for (const char* pooling : {"mean", "cls"}) {
    std::unique_ptr<ModelTask> task;
    ASSERT_TRUE(Make(std::string("    pooling: {value: ") + pooling + "}\n", kSplits, &task).ok());
    torch::manual_seed(1);
    std::unique_ptr<TrainableModel> model;
    ASSERT_TRUE(task->BuildModel({{"pooling", std::string(pooling)}}, &model).ok());
    model->SetTraining(false);
    const Dataset& test = *task->test_data();
    const torch::Tensor alone = model->Forward(test.Gather(torch::tensor({0}, torch::kInt64)));
    const torch::Tensor padded =
        model->Forward(test.Gather(torch::tensor({0, 1}, torch::kInt64)));  // row 1 is longer
    ASSERT_EQ(padded.sizes(), (std::vector<int64_t>{2, 2})) << pooling;
    EXPECT_TRUE(torch::allclose(alone[0], padded[1], 1e-5, 1e-6) ||
                torch::allclose(alone[0], padded[0], 1e-5, 1e-6))
        << pooling;
    const torch::Tensor loss =
        task->Loss(padded, test.Gather(torch::tensor({0, 1}, torch::kInt64)));
    EXPECT_EQ(loss.dim(), 0);
  }
}

TEST_F(TextTaskTest, MaxSeqLengthCutsTheTextTheModelSees) {
  std::unique_ptr<ModelTask> task;
  ASSERT_TRUE(
      Make("    max_seq_length: {values: [1, 3]}\n    dropout: {value: 0.0}\n", kSplits, &task)
          .ok());
  torch::manual_seed(2);
  std::unique_ptr<TrainableModel> one_token;
  ASSERT_TRUE(task->BuildModel({{"max_seq_length", int64_t{1}}}, &one_token).ok());
  one_token->SetTraining(false);
  // With one token, "good fun" is seen as "good": the same logits as the text "good".
  const Batch good_fun = task->test_data()->Gather(torch::tensor({0}, torch::kInt64));
  Batch good = good_fun;
  good.inputs[0] = good_fun.inputs[0].slice(1, 0, 2);
  EXPECT_TRUE(torch::allclose(one_token->Forward(good_fun), one_token->Forward(good)));
}

TEST_F(TextTaskTest, ShapesTheEncoderCannotTakeFailTheTrial) {
  std::unique_ptr<ModelTask> task;
  ASSERT_TRUE(Make("", kSplits, &task).ok());
  std::unique_ptr<TrainableModel> model;
  const Status status = task->BuildModel({{"d_model", int64_t{30}}, {"heads", int64_t{4}}}, &model);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find("d_model 30 and heads 4"), std::string::npos) << status.message();
}

TEST_F(TextTaskTest, ExportStoresTheVocabularyAndClassesBesideTheWeights) {
  std::unique_ptr<ModelTask> task;
  ASSERT_TRUE(Make("", kSplits, &task).ok());
  std::unique_ptr<TrainableModel> model;
  ASSERT_TRUE(task->BuildModel({}, &model).ok());
  const std::string path = (folder_ / "best.pt").string();
  model->Export(path);
  torch::serialize::InputArchive archive;
  archive.load_from(path);
  c10::IValue vocabulary;
  c10::IValue classes;
  ASSERT_TRUE(archive.try_read("vocabulary", vocabulary));
  ASSERT_TRUE(archive.try_read("classes", classes));
  const std::vector<std::string> tokens = vocabulary.to<std::vector<std::string>>();
  ASSERT_GE(tokens.size(), 4u);
  EXPECT_EQ(tokens[0], "[PAD]");
  for (const char* word : {"good", "bad", "fun"}) {  // words of several training rows
    EXPECT_NE(std::find(tokens.begin(), tokens.end(), word), tokens.end()) << word;
  }
  EXPECT_EQ(classes.to<std::vector<std::string>>(), (std::vector<std::string>{"neg", "pos"}));
  std::unique_ptr<TrainableModel> again;
  ASSERT_TRUE(task->BuildModel({}, &again).ok());
  again->Import(path);
  const std::vector<torch::Tensor> saved = model->Parameters();
  const std::vector<torch::Tensor> loaded = again->Parameters();
  ASSERT_EQ(saved.size(), loaded.size());
  for (size_t i = 0; i < saved.size(); ++i) EXPECT_TRUE(torch::equal(saved[i], loaded[i]));
}

TEST_F(TextTaskTest, BadTextSectionsNameTheFileLineAndKey) {
  SweepConfig config;
  Status status = Parse("", "  train: train.tsv\n  test: test.tsv\n  lowercase: true\n", &config);
  EXPECT_NE(status.message().find("sweep.yaml:11: text.lowercase: unknown key"), std::string::npos)
      << status.message();
  status = Parse("", "  train: train.tsv\n", &config);
  EXPECT_NE(status.message().find("text.test: missing"), std::string::npos) << status.message();
  status = Parse("", "  train: train.tsv\n  test: nowhere.tsv\n", &config);
  EXPECT_NE(status.message().find("sweep.yaml:10: text.test: "), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("nowhere.tsv does not exist"), std::string::npos);
  status = Parse("", "  train: train.tsv\n  test: test.tsv\n  format: json\n", &config);
  EXPECT_NE(status.message().find("text.format: must be tsv or csv"), std::string::npos)
      << status.message();
  status = Parse("", "  train: train.tsv\n  test: test.tsv\n  min_count: 0\n", &config);
  EXPECT_NE(status.message().find("text.min_count: must be an integer >= 1"), std::string::npos)
      << status.message();
  status = Parse("    width: {value: 3}\n", kSplits, &config);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find("width"), std::string::npos) << status.message();
}

TEST_F(TextTaskTest, BadFilesNameTheFileAndLine) {
  Write("new_label.tsv", "text\tlabel\ngood\tpos\nmeh\tmixed\n");
  Write("no_label.tsv", "text\tsentiment\ngood\tpos\n");
  std::unique_ptr<ModelTask> task;
  Status status = Make("", "  train: train.tsv\n  test: new_label.tsv\n", &task);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(
      status.message().find("new_label.tsv:3: label 'mixed' is not a label of the training split"),
      std::string::npos)
      << status.message();
  status = Make("", "  train: no_label.tsv\n  test: test.tsv\n", &task);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find("no_label.tsv"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("'label'"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace hpo
