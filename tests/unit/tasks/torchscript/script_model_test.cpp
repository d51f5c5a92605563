#include "tasks/torchscript/model_runtime/script_model.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hpo/epoch_gate.hpp"
#include "hpo/task_catalog.hpp"
#include "train/trainer.hpp"

namespace hpo {
namespace {

namespace fs = std::filesystem;

constexpr char kPython[] = "/usr/bin/python3";

// A classifier scripted by Debian's python3-torch (the same 1.13 as libtorch), with a BatchNorm
// (buffers) and two inputs (features and a per-sample scale), saved with torch.jit.save.
constexpr char kScript[] = R"(
import sys, torch
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = torch.nn.Linear(4, 16)
        self.norm = torch.nn.BatchNorm1d(16)
        self.out = torch.nn.Linear(16, 2)
    def forward(self, x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        return self.out(torch.relu(self.norm(self.hidden(x * scale.unsqueeze(1)))))
torch.manual_seed(0)
torch.jit.save(torch.jit.script(Net()), sys.argv[1])
)";

class ScriptModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("hpo_script_model_" + std::to_string(::getpid()));
    fs::create_directories(folder_);
    const std::string script = (folder_ / "make.py").string();
    std::ofstream(script) << kScript;
    path_ = (folder_ / "net.pt").string();
    const std::string command = std::string(kPython) + " " + script + " " + path_ + " 2>/dev/null";
    if (access(kPython, X_OK) != 0 || std::system(command.c_str()) != 0) {
      GTEST_SKIP() << kPython << " with torch is needed to script the test module";
    }
  }
  void TearDown() override { fs::remove_all(folder_); }

  fs::path folder_;
  std::string path_;
};

// Two inputs per sample; the label is whether x0 + x1 > 0.
TensorDataset Separable(int64_t rows, uint64_t seed) {
  torch::manual_seed(seed);
  const torch::Tensor x = torch::randn({rows, 4});
  const torch::Tensor scale = torch::ones({rows});
  return TensorDataset({x, scale}, (x.select(1, 0) + x.select(1, 1) > 0).to(torch::kInt64));
}

class ScriptTask final : public ModelTask {
 public:
  explicit ScriptTask(std::string path)
      : path_(std::move(path)),
        train_(Separable(512, 1)),
        validation_(Separable(256, 2)),
        objective_({"no", "yes"}) {}
  const Dataset& train_data() const override { return train_; }
  const Dataset& validation_data() const override { return validation_; }
  const Dataset* test_data() const override { return &validation_; }
  Status BuildModel(const Assignment&, std::unique_ptr<TrainableModel>* model) override {
    std::unique_ptr<ScriptModel> script;
    HPO_RETURN_IF_ERROR(ScriptModel::Load(path_, &script));
    *model = std::move(script);
    return Status::Ok();
  }
  torch::Tensor Loss(const torch::Tensor& outputs, const Batch& batch) override {
    return objective_.Loss(outputs, batch);
  }
  size_t EvaluationSize() const override { return objective_.EvaluationSize(); }
  void Accumulate(const torch::Tensor& outputs, const Batch& batch, double* sums) override {
    objective_.Accumulate(outputs, batch, sums);
  }
  Evaluation Summarize(const std::vector<double>& sums, const std::string& prefix) override {
    return objective_.Summarize(sums, prefix);
  }

 private:
  std::string path_;
  TensorDataset train_;
  TensorDataset validation_;
  ClassificationObjective objective_;
};

TEST_F(ScriptModelTest, ExposesEveryParameterAndBufferOfTheModule) {
  std::unique_ptr<ScriptModel> model;
  ASSERT_TRUE(ScriptModel::Load(path_, &model).ok());
  EXPECT_EQ(model->Parameters().size(), 6u);  // 2 linear layers and the norm: weight and bias
  EXPECT_EQ(model->Buffers().size(), 3u);     // running mean, var, num_batches_tracked
  Batch batch = Separable(8, 3).Gather(torch::arange(8));
  EXPECT_EQ(model->Forward(batch).sizes(), (std::vector<int64_t>{8, 2}));
}

TEST_F(ScriptModelTest, TheTrainerTrainsItAndTheExportedFileEvaluatesTheSame) {
  ScriptTask task(path_);
  TrainingSetup setup;
  setup.task = &task;
  setup.hyperparameters = TrainerHyperparameters();
  setup.metric_names = ModelTaskMetricNames(ClassificationObjective::MetricNames("val_"));
  TrainOptions options;
  options.epochs = 5;
  options.save_weights_path = (folder_ / "best.pt").string();
  options.checkpoint_path = (folder_ / "checkpoint.pt").string();
  TrialSpec trial;
  trial.trial_id = 1;
  trial.seed = 7;
  trial.params = {{"lr", 0.05}, {"batch_size", int64_t{32}}};
  SingleRankCollectives single;
  AlwaysContinue gate;
  TrialOutcome outcome;
  std::unique_ptr<TrainableModel> trained;
  const Status status = RunTrial(setup, trial, single, gate, options, &outcome, &trained);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(outcome.status, TrialStatus::kCompleted) << outcome.message;
  ASSERT_EQ(outcome.curve.size(), 5u);
  EXPECT_GT(outcome.curve.back().values[2], 0.9);  // val_accuracy

  // The exported file is TorchScript again, and evaluates to the trained model's accuracy.
  std::unique_ptr<ScriptModel> exported;
  ASSERT_TRUE(ScriptModel::Load(options.save_weights_path, &exported).ok());
  Evaluation evaluation;
  ASSERT_TRUE(EvaluateSavedModel(setup, trial.params, options.save_weights_path, &evaluation).ok());
  std::map<std::string, double> metrics(evaluation.metrics.begin(), evaluation.metrics.end());
  EXPECT_DOUBLE_EQ(metrics.at("test_accuracy"), outcome.curve.back().values[2]);

  // A checkpoint written by Save loads back into a fresh model, buffers included.
  torch::serialize::OutputArchive archive;
  trained->Save(archive);
  archive.save_to((folder_ / "state.pt").string());
  std::unique_ptr<ScriptModel> fresh;
  ASSERT_TRUE(ScriptModel::Load(path_, &fresh).ok());
  torch::serialize::InputArchive input;
  input.load_from((folder_ / "state.pt").string());
  fresh->Load(input);
  const std::vector<torch::Tensor> a = trained->Buffers();
  const std::vector<torch::Tensor> b = fresh->Buffers();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << i;
}

TEST_F(ScriptModelTest, AFileThatIsNotAModuleIsBadInputNamingIt) {
  const std::string bogus = (folder_ / "weights.pt").string();
  std::ofstream(bogus) << "not a zip archive";
  std::unique_ptr<ScriptModel> model;
  const Status status = ScriptModel::Load(bogus, &model);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find(bogus), std::string::npos) << status.message();
  EXPECT_EQ(ScriptModel::Load((folder_ / "missing.pt").string(), &model).code(),
            Status::Code::kBadInput);
}

}  // namespace
}  // namespace hpo
