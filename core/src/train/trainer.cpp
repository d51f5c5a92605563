#include "hpo/train/trainer.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include "hpo/task_catalog.hpp"
#include "hpo/train/distributed_sampler.hpp"
#include "hpo/train/gradient_buckets.hpp"
#include "hpo/train/models.hpp"

namespace hpo {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kEvalBatch = 1024;
constexpr int64_t kMaxWidth = 4096;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A trial's hyperparameters, read and checked.
struct Hyperparameters {
  double lr = 0.0;
  int64_t batch_size = 0;
  std::string optimizer;
  double momentum = 0.0;
  double weight_decay = 0.0;
  double dropout = 0.0;
  int64_t width = 0;
};

Status ReadNumber(TaskKind task, const Assignment& params, const std::string& name, double* value) {
  const ParamValue param = HyperparameterOrDefault(task, params, name);
  if (std::holds_alternative<std::string>(param)) {
    return Status::BadInput("hyperparameter " + name + ": expected a number, got \"" +
                            std::get<std::string>(param) + "\"");
  }
  *value = ParamAsDouble(param);
  if (!std::isfinite(*value)) {
    return Status::BadInput("hyperparameter " + name + ": must be finite, got " +
                            FormatParamValue(param));
  }
  return Status::Ok();
}

Status ReadInteger(TaskKind task, const Assignment& params, const std::string& name,
                   int64_t* value) {
  double number = 0.0;
  HPO_RETURN_IF_ERROR(ReadNumber(task, params, name, &number));
  if (number != std::floor(number) || std::fabs(number) > 9.0e15) {
    return Status::BadInput("hyperparameter " + name + ": expected an integer, got " +
                            FormatParamValueExact(ParamValue(number)));
  }
  *value = static_cast<int64_t>(number);
  return Status::Ok();
}

Status OutOfRange(const std::string& name, const std::string& range, double value) {
  return Status::BadInput("hyperparameter " + name + ": must be " + range + ", got " +
                          FormatParamValueExact(ParamValue(value)));
}

Status ReadHyperparameters(TaskKind task, const Assignment& params, Hyperparameters* h) {
  HPO_RETURN_IF_ERROR(ReadNumber(task, params, "lr", &h->lr));
  HPO_RETURN_IF_ERROR(ReadInteger(task, params, "batch_size", &h->batch_size));
  HPO_RETURN_IF_ERROR(ReadNumber(task, params, "momentum", &h->momentum));
  HPO_RETURN_IF_ERROR(ReadNumber(task, params, "weight_decay", &h->weight_decay));
  HPO_RETURN_IF_ERROR(ReadNumber(task, params, "dropout", &h->dropout));
  HPO_RETURN_IF_ERROR(ReadInteger(task, params, "width", &h->width));
  const ParamValue optimizer = HyperparameterOrDefault(task, params, "optimizer");
  if (const auto* name = std::get_if<std::string>(&optimizer)) h->optimizer = *name;
  if (h->optimizer != "sgd" && h->optimizer != "adam" && h->optimizer != "adamw") {
    return Status::BadInput("hyperparameter optimizer: must be one of sgd, adam, adamw, got " +
                            FormatParamValue(optimizer));
  }
  if (!(h->lr > 0.0)) return OutOfRange("lr", "> 0", h->lr);
  if (h->batch_size < 1) return OutOfRange("batch_size", ">= 1", h->batch_size);
  if (h->momentum < 0.0 || h->momentum >= 1.0) {
    return OutOfRange("momentum", "in [0, 1)", h->momentum);
  }
  if (h->weight_decay < 0.0) return OutOfRange("weight_decay", ">= 0", h->weight_decay);
  if (h->dropout < 0.0 || h->dropout >= 1.0) return OutOfRange("dropout", "in [0, 1)", h->dropout);
  if (h->width < 1 || h->width > kMaxWidth) {
    return OutOfRange("width", "in [1, " + std::to_string(kMaxWidth) + "]", h->width);
  }
  return Status::Ok();
}

ModelSpec MakeModelSpec(TaskKind task, const Hyperparameters& h, const TaskData& data) {
  ModelSpec spec;
  spec.task = task;
  spec.width = h.width;
  spec.dropout = h.dropout;
  spec.num_classes = data.num_classes;
  const torch::Tensor& inputs = data.train.inputs.defined() ? data.train.inputs : data.test.inputs;
  spec.input_features = inputs.dim() == 2 ? inputs.size(1) : 0;
  return spec;
}

std::unique_ptr<torch::optim::Optimizer> MakeOptimizer(const Hyperparameters& h,
                                                       const std::vector<torch::Tensor>& params) {
  namespace optim = torch::optim;
  if (h.optimizer == "sgd") {
    return std::make_unique<optim::SGD>(
        params, optim::SGDOptions(h.lr).momentum(h.momentum).weight_decay(h.weight_decay));
  }
  if (h.optimizer == "adam") {
    return std::make_unique<optim::Adam>(params,
                                         optim::AdamOptions(h.lr).weight_decay(h.weight_decay));
  }
  return std::make_unique<optim::AdamW>(params,
                                        optim::AdamWOptions(h.lr).weight_decay(h.weight_decay));
}

// Intra-op threads of torch and of OpenBLAS (whose pthreads build ignores torch's setting and
// would otherwise use every core in every rank). Both are process-wide.
void SetComputeThreads(int64_t threads) {
  torch::set_num_threads(static_cast<int>(threads));
  using SetThreadsFn = void (*)(int);
  if (auto set_blas_threads =
          reinterpret_cast<SetThreadsFn>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) {
    set_blas_threads(static_cast<int>(threads));
  }
}

// Builds the trial's model from the trial seed. torch's generator is process-wide, so seeding and
// building hold a lock: a process that trains several ranks on threads (the tests) still builds
// every model from its own seed.
torch::nn::Sequential BuildSeededModel(const ModelSpec& spec, uint64_t seed) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  torch::manual_seed(seed);
  return BuildModel(spec);
}

torch::Tensor Rows(const torch::Tensor& tensor, const std::vector<int64_t>& indices) {
  const torch::Tensor index = torch::tensor(indices, torch::kInt64);
  return tensor.index_select(0, index);
}

// Sums of the cross-entropy loss and correct predictions over rows [range) of `split`.
struct EvalSums {
  double loss_sum = 0.0;
  double correct = 0.0;
  double count = 0.0;
};

EvalSums Evaluate(torch::nn::Sequential& model, const LabeledTensors& split, IndexRange range) {
  torch::NoGradGuard no_grad;
  model->eval();
  EvalSums sums;
  for (int64_t begin = range.begin; begin < range.end; begin += kEvalBatch) {
    const int64_t length = std::min(kEvalBatch, range.end - begin);
    const torch::Tensor inputs = split.inputs.narrow(0, begin, length);
    const torch::Tensor labels = split.labels.narrow(0, begin, length);
    const torch::Tensor logits = model->forward(inputs);
    sums.loss_sum +=
        torch::nn::functional::cross_entropy(
            logits, labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
            .item<double>();
    sums.correct += logits.argmax(1).eq(labels).sum().item<double>();
    sums.count += static_cast<double>(length);
  }
  model->train();
  return sums;
}

// One rank's side of a running trial.
class TrialRun {
 public:
  TrialRun(const ExecutionSpec& execution, const TrialSpec& trial, const TaskData& data,
           GroupCollectives& collectives, const Hyperparameters& h, const TrainOptions& options)
      : execution_(execution),
        trial_(trial),
        data_(data),
        collectives_(collectives),
        options_(options),
        model_(BuildSeededModel(MakeModelSpec(execution.task, h, data), trial.seed)),
        sampler_(data.train.size(), h.batch_size, trial.seed, collectives.rank(),
                 collectives.size()) {
    BroadcastModelState(*model_, collectives_);
    // Dropout masks differ between ranks (they see different samples) but not between runs.
    torch::manual_seed(trial.seed + 0x9e3779b97f4a7c15ULL * (collectives.rank() + 1));
    for (const torch::Tensor& parameter : model_->parameters()) {
      if (parameter.requires_grad()) parameters_.push_back(parameter);
    }
    buckets_ = std::make_unique<GradientBuckets>(parameters_, options.bucket_bytes, 1);
    optimizer_ = MakeOptimizer(h, parameters_);
  }

  const torch::nn::Sequential& model() const { return model_; }

  // Runs every epoch, asking `gate` after each; fills `outcome` (not duration_s).
  Status Run(EpochGate& gate, TrialOutcome* outcome) {
    const std::vector<std::string>& metric_names = TaskMetricNames(execution_.task);
    model_->train();
    for (int64_t epoch = 1; epoch <= options_.epochs; ++epoch) {
      const Clock::time_point start = Clock::now();
      double train_loss = 0.0;
      int64_t failed_step = 0;
      TrainEpoch(epoch, &train_loss, &failed_step);
      if (failed_step > 0) {
        outcome->status = TrialStatus::kFailed;
        outcome->message = "non-finite loss at epoch " + std::to_string(epoch) + " step " +
                           std::to_string(failed_step);
        return Status::Ok();
      }
      SyncBuffers(*model_, collectives_);
      const EvalSums local =
          Evaluate(model_, data_.validation,
                   ShardOf({0, data_.validation.size()}, collectives_.rank(), collectives_.size()));

      // [loss_sum, correct, count, epoch time of rank 0, ..., of rank n-1]
      std::vector<double> sums(3 + collectives_.size(), 0.0);
      sums[0] = local.loss_sum;
      sums[1] = local.correct;
      sums[2] = local.count;
      sums[3 + collectives_.rank()] = SecondsSince(start);
      collectives_.AllreduceSum(sums.data(), sums.size());

      const std::map<std::string, double> values = {
          {"train_loss", train_loss},
          {"val_loss", sums[0] / sums[2]},
          {"val_accuracy", sums[1] / sums[2]},
          {"epoch_time_s", *std::max_element(sums.begin() + 3, sums.end())},
      };
      EpochMetrics metrics;
      metrics.epoch = epoch;
      for (const std::string& name : metric_names) {
        const auto found = values.find(name);
        if (found == values.end()) return Status::Failure("trainer reports no metric " + name);
        metrics.values.push_back(found->second);
      }
      outcome->curve.push_back(metrics);
      if (!gate.ShouldContinue(trial_.trial_id, metrics) && epoch < options_.epochs) {
        outcome->status = TrialStatus::kStopped;
        outcome->message = "stopped by scheduler after epoch " + std::to_string(epoch);
        break;
      }
    }
    return SaveWeights();
  }

 private:
  // Trains one epoch; sets `train_loss` (the mean over the epoch's samples on all ranks) or, when
  // some rank's loss is not finite, `failed_step` (1-based; every rank stops at the same step).
  void TrainEpoch(int64_t epoch, double* train_loss, int64_t* failed_step) {
    sampler_.SetEpoch(epoch);
    double loss_sum = 0.0;
    for (int64_t step = 0; step < sampler_.num_steps(); ++step) {
      const std::vector<int64_t> indices = sampler_.LocalIndices(step);
      const auto local_count = static_cast<double>(indices.size());
      const auto global_count = static_cast<double>(sampler_.GlobalBatch(step).size());
      optimizer_->zero_grad();
      // This rank's share of the global batch's mean loss; the group's sum is that mean.
      float loss_share = 0.0f;
      if (!indices.empty()) {
        const torch::Tensor logits = model_->forward(Rows(data_.train.inputs, indices));
        const torch::Tensor loss =
            torch::nn::functional::cross_entropy(logits, Rows(data_.train.labels, indices));
        loss.backward();
        loss_share = static_cast<float>(loss.item<double>() * local_count / global_count);
      }
      buckets_->AllreduceGradients(collectives_, static_cast<float>(local_count / global_count),
                                   &loss_share);
      if (!std::isfinite(loss_share)) {
        *failed_step = step + 1;
        return;
      }
      optimizer_->step();
      loss_sum += static_cast<double>(loss_share) * global_count;
    }
    *train_loss = loss_sum / static_cast<double>(data_.train.size());
  }

  Status SaveWeights() {
    if (options_.save_weights_path.empty() || collectives_.rank() != 0) return Status::Ok();
    const std::filesystem::path path(options_.save_weights_path);
    std::error_code ec;
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) {
      return Status::Failure(path.parent_path().string() + ": cannot create: " + ec.message());
    }
    torch::save(model_, path.string());
    return Status::Ok();
  }

  const ExecutionSpec& execution_;
  const TrialSpec& trial_;
  const TaskData& data_;
  GroupCollectives& collectives_;
  const TrainOptions& options_;
  torch::nn::Sequential model_;
  DistributedSampler sampler_;
  std::vector<torch::Tensor> parameters_;
  std::unique_ptr<GradientBuckets> buckets_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
};

}  // namespace

Status RunTrial(const ExecutionSpec& execution, const TrialSpec& trial, const TaskData& data,
                GroupCollectives& collectives, EpochGate& gate, const TrainOptions& options,
                TrialOutcome* outcome) {
  return RunTrial(execution, trial, data, collectives, gate, options, outcome, nullptr);
}

Status RunTrial(const ExecutionSpec& execution, const TrialSpec& trial, const TaskData& data,
                GroupCollectives& collectives, EpochGate& gate, const TrainOptions& options,
                TrialOutcome* outcome, torch::nn::Sequential* trained_model) {
  const Clock::time_point start = Clock::now();
  *outcome = TrialOutcome();
  Hyperparameters h;
  HPO_RETURN_IF_ERROR(ReadHyperparameters(execution.task, trial.params, &h));
  if (execution.threads_per_rank < 1) {
    return Status::BadInput("threads_per_rank must be >= 1, got " +
                            std::to_string(execution.threads_per_rank));
  }
  if (data.train.size() == 0 || data.validation.size() == 0) {
    return Status::BadInput("the task has no training or no validation samples");
  }
  Status status;
  try {
    SetComputeThreads(execution.threads_per_rank);
    TrialRun run(execution, trial, data, collectives, h, options);
    status = run.Run(gate, outcome);
    if (trained_model != nullptr) *trained_model = run.model();
  } catch (const std::exception& error) {
    status = Status::Failure(std::string("trial ") + std::to_string(trial.trial_id) + ": " +
                             error.what());
  }
  outcome->duration_s = SecondsSince(start);
  return status;
}

Status EvaluateSavedModel(const ExecutionSpec& execution, const Assignment& params,
                          const std::string& weights_path, const TaskData& data,
                          double* test_accuracy) {
  Hyperparameters h;
  HPO_RETURN_IF_ERROR(ReadHyperparameters(execution.task, params, &h));
  if (data.test.size() == 0) return Status::BadInput("the task has no test samples");
  std::error_code ec;
  if (!std::filesystem::exists(weights_path, ec)) {
    return Status::Failure(weights_path + ": no such file");
  }
  try {
    torch::nn::Sequential model = BuildModel(MakeModelSpec(execution.task, h, data));
    torch::load(model, weights_path);
    const EvalSums sums = Evaluate(model, data.test, {0, data.test.size()});
    *test_accuracy = sums.correct / sums.count;
  } catch (const std::exception& error) {
    return Status::Failure(weights_path + ": " + error.what());
  }
  return Status::Ok();
}

}  // namespace hpo
