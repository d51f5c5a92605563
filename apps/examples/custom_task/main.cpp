// custom_hpo: the `hpo` command line with one more kind of task, `spirals`, written only against
// the public API (hpo/model_task.hpp, hpo/main.hpp). The task generates its data (two interleaved
// spirals in the plane, one class each), builds an MLP from a trial's hyperparameters, and leaves
// the loss and the metrics to ClassificationObjective; the project's trainer does the rest.
//   mpirun -np 2 ./custom_hpo sweep --config spirals.yaml --output runs/spirals
//   ./custom_hpo report runs/spirals/study.h5
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "hpo/main.hpp"
#include "hpo/model_task.hpp"

namespace {

constexpr int64_t kTrainPoints = 2000;
constexpr int64_t kValidationPoints = 500;
constexpr int64_t kTestPoints = 500;
constexpr double kPi = 3.14159265358979323846;
constexpr double kSpiralTurns = 1.5;
constexpr double kNoise = 0.08;

// `points` points, half on each of two spirals (class 0 and class 1, the second turned by half a
// revolution), with Gaussian noise: inputs float [points, 2], targets int64 [points].
hpo::TensorDataset MakeSpirals(int64_t points, std::mt19937_64* random) {
  std::uniform_real_distribution<double> along(0.0, 1.0);
  std::normal_distribution<double> noise(0.0, kNoise);
  torch::Tensor inputs = torch::empty({points, 2}, torch::kFloat);
  torch::Tensor targets = torch::empty({points}, torch::kLong);
  auto input_rows = inputs.accessor<float, 2>();
  auto target_rows = targets.accessor<int64_t, 1>();
  for (int64_t i = 0; i < points; ++i) {
    const int64_t spiral = i % 2;
    const double radius = std::sqrt(along(*random));  // uniform over the spiral's area
    const double angle = radius * kSpiralTurns * 2.0 * kPi + static_cast<double>(spiral) * kPi;
    input_rows[i][0] = static_cast<float>(radius * std::cos(angle) + noise(*random));
    input_rows[i][1] = static_cast<float>(radius * std::sin(angle) + noise(*random));
    target_rows[i] = spiral;
  }
  return hpo::TensorDataset({inputs}, targets);
}

// An MLP on 2-D points: `layers` hidden layers of `hidden` units, each followed by tanh or ReLU,
// then one logit per class.
class SpiralNet : public torch::nn::Module {
 public:
  SpiralNet(int64_t hidden, int64_t layers, bool use_tanh, int64_t classes) : use_tanh_(use_tanh) {
    int64_t inputs = 2;
    for (int64_t i = 0; i < layers; ++i) {
      hidden_layers_.push_back(
          register_module("hidden" + std::to_string(i), torch::nn::Linear(inputs, hidden)));
      inputs = hidden;
    }
    output_ = register_module("output", torch::nn::Linear(inputs, classes));
  }

  torch::Tensor forward(torch::Tensor points) {
    for (torch::nn::Linear& layer : hidden_layers_) {
      points = use_tanh_ ? torch::tanh(layer(points)) : torch::relu(layer(points));
    }
    return output_(points);
  }

 private:
  bool use_tanh_;
  std::vector<torch::nn::Linear> hidden_layers_;
  torch::nn::Linear output_{nullptr};
};

hpo::HyperparameterInfo IntHyperparameter(std::string name, int64_t default_value, int64_t min,
                                          int64_t max, std::string help) {
  hpo::HyperparameterInfo info;
  info.name = std::move(name);
  info.type = hpo::ParamType::kInt;
  info.default_value = default_value;
  info.min = static_cast<double>(min);
  info.max = static_cast<double>(max);
  info.help = std::move(help);
  return info;
}

// The trainer's (lr, batch_size, optimizer, ...) and the model's own.
const std::vector<hpo::HyperparameterInfo>& SpiralsHyperparameters() {
  static const std::vector<hpo::HyperparameterInfo> kHyperparameters = [] {
    std::vector<hpo::HyperparameterInfo> all = hpo::TrainerHyperparameters();
    all.push_back(IntHyperparameter("hidden", 32, 1, 1024, "units per hidden layer"));
    all.push_back(IntHyperparameter("layers", 2, 1, 8, "hidden layers"));
    hpo::HyperparameterInfo activation;
    activation.name = "activation";
    activation.type = hpo::ParamType::kString;
    activation.default_value = std::string("relu");
    activation.choices = {"relu", "tanh"};
    activation.help = "the hidden layers' activation: relu or tanh";
    all.push_back(activation);
    return all;
  }();
  return kHyperparameters;
}

// One rank's spirals task: the three splits, generated from the sweep's seed (the same on every
// rank), and the MLP of each trial.
class SpiralsTask final : public hpo::ModelTask {
 public:
  explicit SpiralsTask(uint64_t seed) : objective_({"spiral_a", "spiral_b"}) {
    std::mt19937_64 random(seed);
    train_ = MakeSpirals(kTrainPoints, &random);
    validation_ = MakeSpirals(kValidationPoints, &random);
    test_ = MakeSpirals(kTestPoints, &random);
  }

  const hpo::Dataset& train_data() const override { return train_; }
  const hpo::Dataset& validation_data() const override { return validation_; }
  const hpo::Dataset* test_data() const override { return &test_; }

  hpo::Status BuildModel(const hpo::Assignment& params,
                         std::unique_ptr<hpo::TrainableModel>* model) override {
    const auto value = [&params](const std::string& name) {
      return hpo::HyperparameterOrDefault(SpiralsHyperparameters(), params, name);
    };
    const auto net = std::make_shared<SpiralNet>(
        std::get<int64_t>(value("hidden")), std::get<int64_t>(value("layers")),
        std::get<std::string>(value("activation")) == "tanh", objective_.num_classes());
    *model = std::make_unique<hpo::ModuleModel>(
        net, [net](const hpo::Batch& batch) { return net->forward(batch.inputs[0]); });
    return hpo::Status::Ok();
  }

  torch::Tensor Loss(const torch::Tensor& outputs, const hpo::Batch& batch) override {
    return objective_.Loss(outputs, batch);
  }
  size_t EvaluationSize() const override { return objective_.EvaluationSize(); }
  void Accumulate(const torch::Tensor& outputs, const hpo::Batch& batch, double* sums) override {
    objective_.Accumulate(outputs, batch, sums);
  }
  hpo::Evaluation Summarize(const std::vector<double>& sums, const std::string& prefix) override {
    return objective_.Summarize(sums, prefix);
  }

 private:
  hpo::ClassificationObjective objective_;
  hpo::TensorDataset train_;
  hpo::TensorDataset validation_;
  hpo::TensorDataset test_;
};

}  // namespace

int main(int argc, char** argv) {
  hpo::TaskRegistry registry = hpo::BuiltinTaskRegistry();
  hpo::AddModelTask(
      &registry,
      hpo::MakeTaskDescription(
          "spirals", SpiralsHyperparameters(),
          hpo::ModelTaskMetricNames(hpo::ClassificationObjective::MetricNames("val_"))),
      [](const hpo::SweepConfig& config, std::unique_ptr<hpo::ModelTask>* task) {
        *task = std::make_unique<SpiralsTask>(config.execution.seed);
        return hpo::Status::Ok();
      });
  return hpo::Main(argc, argv, registry);
}
