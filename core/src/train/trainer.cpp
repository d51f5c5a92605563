#include "train/trainer.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "common/diagnostic.hpp"
#include "common/seeding.hpp"
#include "train/archive_file.hpp"
#include "train/batch_prefetcher.hpp"
#include "train/distributed_sampler.hpp"
#include "train/gradient_buckets.hpp"
#include "train/lr_schedule.hpp"
#include "train/model_sync.hpp"

namespace hpo {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kEvalBatch = 1024;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The trainer's hyperparameters of a trial (TrainerHyperparameters), read and checked.
struct Hyperparameters {
  double lr = 0.0;
  int64_t batch_size = 0;
  std::string optimizer;
  double momentum = 0.0;
  double weight_decay = 0.0;
  double warmup_ratio = 0.0;
};

Status ReadNumber(const std::vector<HyperparameterInfo>& known, const Assignment& params,
                  const std::string& name, double* value) {
  const ParamValue param = HyperparameterOrDefault(known, params, name);
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

Status ReadInteger(const std::vector<HyperparameterInfo>& known, const Assignment& params,
                   const std::string& name, int64_t* value) {
  double number = 0.0;
  HPO_RETURN_IF_ERROR(ReadNumber(known, params, name, &number));
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

Status ReadHyperparameters(const std::vector<HyperparameterInfo>& known, const Assignment& params,
                           Hyperparameters* h) {
  HPO_RETURN_IF_ERROR(ReadNumber(known, params, "lr", &h->lr));
  HPO_RETURN_IF_ERROR(ReadInteger(known, params, "batch_size", &h->batch_size));
  HPO_RETURN_IF_ERROR(ReadNumber(known, params, "momentum", &h->momentum));
  HPO_RETURN_IF_ERROR(ReadNumber(known, params, "weight_decay", &h->weight_decay));
  HPO_RETURN_IF_ERROR(ReadNumber(known, params, "warmup_ratio", &h->warmup_ratio));
  const ParamValue optimizer = HyperparameterOrDefault(known, params, "optimizer");
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
  if (h->warmup_ratio < 0.0 || h->warmup_ratio >= 1.0) {
    return OutOfRange("warmup_ratio", "in [0, 1)", h->warmup_ratio);
  }
  return Status::Ok();
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
Status BuildSeededModel(ModelTask& task, const Assignment& params, uint64_t seed,
                        std::unique_ptr<TrainableModel>* model) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  torch::manual_seed(seed);
  return task.BuildModel(params, model);
}

// Evaluates `model` on rows [range) of `split`, adding the task's sums into `sums`.
void Evaluate(ModelTask& task, TrainableModel& model, const Dataset& split, IndexRange range,
              torch::Device device, double* sums) {
  torch::NoGradGuard no_grad;
  model.SetTraining(false);
  for (int64_t begin = range.begin; begin < range.end; begin += kEvalBatch) {
    const int64_t length = std::min(kEvalBatch, range.end - begin);
    const Batch batch =
        split.Gather(torch::arange(begin, begin + length, torch::kInt64)).To(device);
    task.Accumulate(model.Forward(batch), batch, sums);
  }
  model.SetTraining(true);
}

// A checkpoint file that exists but cannot be restored (another version's format, damaged).
class CheckpointUnusable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Canonical text of a trial's seed and hyperparameters, stored in its checkpoint to recognise it.
std::string DescribeTrial(const TrialSpec& trial) {
  std::string text = "seed=" + std::to_string(trial.seed) + ';';
  for (const NamedValue& entry : trial.params) {
    text += entry.name + '=' + FormatParamValueExact(entry.value) + ';';
  }
  return text;
}

// Throws, for a CUDA or NCCL error other than running out of memory, a std::runtime_error that no
// handler of the trainer takes for the trial's own failure: CUDA's errors are sticky (every later
// call of this process fails too, a device-side assert included), so no later trial could train on
// this rank. The runtime ends the job with its one line (runtime/group_trials.cpp); `--resume` runs
// the trial again. `where` says when (" at epoch E step S"), `rank` which group rank.
void ThrowIfDeviceFailure(const std::exception& error, const std::string& where, int rank) {
  const auto* torch_error = dynamic_cast<const c10::Error*>(&error);
  if (torch_error == nullptr || dynamic_cast<const c10::OutOfMemoryError*>(&error) != nullptr) {
    return;
  }
  const std::string what = torch_error->what_without_backtrace();
  const std::string first_line = what.substr(0, what.find('\n'));
  const bool device = first_line.find("CUDA error") != std::string::npos ||
                      first_line.find("NCCL error") != std::string::npos;
  if (!device || first_line.find("out of memory") != std::string::npos) return;
  throw std::runtime_error(first_line + where + " on rank " + std::to_string(rank) +
                           ": the GPU is unusable to this process after a CUDA error, so the job "
                           "ends; `hpo sweep --resume` runs the trial again");
}

// Why `error` ended a step, in one line: torch's message without its C++ backtrace; out of memory
// (the host's or a GPU's) says so first, with `out_of_memory_hint` when there is one.
std::string DescribeException(const std::exception& error, const std::string& out_of_memory_hint) {
  const auto* torch_error = dynamic_cast<const c10::Error*>(&error);
  const std::string what =
      torch_error != nullptr ? torch_error->what_without_backtrace() : std::string(error.what());
  const bool out_of_memory = dynamic_cast<const std::bad_alloc*>(&error) != nullptr ||
                             dynamic_cast<const c10::OutOfMemoryError*>(&error) != nullptr;
  if (!out_of_memory) return what;
  std::string text = "out of memory";
  if (!out_of_memory_hint.empty()) text += ": " + out_of_memory_hint;
  return text + " (" + what + ")";
}

// Collective: every rank says whether it failed (and why); returns, on every rank, the first
// failing rank's reason prefixed with its rank, or "" when no rank failed.
std::string AgreeOnError(GroupCollectives& collectives, const std::string& local_error) {
  std::vector<double> failed(static_cast<size_t>(collectives.size()), 0.0);
  failed[static_cast<size_t>(collectives.rank())] = local_error.empty() ? 0.0 : 1.0;
  collectives.AllreduceSum(failed.data(), failed.size());
  const auto first = std::find_if(failed.begin(), failed.end(), [](double f) { return f > 0.0; });
  if (first == failed.end()) return "";
  const int root = static_cast<int>(first - failed.begin());
  uint64_t length = collectives.rank() == root ? local_error.size() : 0;
  collectives.Broadcast(&length, sizeof(length), root);
  std::string reason = collectives.rank() == root ? local_error : std::string(length, '\0');
  collectives.Broadcast(reason.data(), length, root);
  return "rank " + std::to_string(root) + ": " + reason;
}

// Where a trial stands: epochs done, steps of the next epoch done, and that epoch's loss so far.
struct TrainingPosition {
  int64_t epochs_done = 0;
  int64_t next_step = 0;
  double partial_loss_sum = 0.0;
};

// Slots riding in the last gradient bucket: each rank's share of the step's loss, and flags
// (0 or 1 per rank, summed) for a failure on the rank and an interruption request.
enum StepExtra : size_t { kLossShare = 0, kFailed = 1, kInterrupt = 2, kStepExtras = 3 };

// One rank's side of a running trial.
class TrialRun {
 public:
  // Takes the trial's model (built on the CPU from the trial seed, so the same initial weights on
  // any device), moves it to the device and makes its optimizer; not collective, may throw.
  TrialRun(const TrainingSetup& setup, const TrialSpec& trial, GroupCollectives& collectives,
           const Hyperparameters& h, const TrainOptions& options,
           std::unique_ptr<TrainableModel> model)
      : setup_(setup),
        task_(*setup.task),
        trial_(trial),
        collectives_(collectives),
        options_(options),
        hyperparameters_(h),
        model_(std::move(model)),
        sampler_(task_.train_data().size(), h.batch_size, trial.seed, collectives.rank(),
                 collectives.size()) {
    model_->MoveTo(options.device);
    for (const torch::Tensor& parameter : model_->Parameters()) {
      if (parameter.requires_grad()) parameters_.push_back(parameter);
    }
    buckets_ = std::make_unique<GradientBuckets>(parameters_, options.bucket_bytes, kStepExtras,
                                                 options.first_bucket_bytes, options.compression);
    optimizer_ = MakeOptimizer(h, parameters_);
  }

  std::unique_ptr<TrainableModel> TakeModel() { return std::move(model_); }

  // Collective: identical initial weights on every rank, or, with `resume`, the state of the
  // trial's checkpoint when there is one. Fills the restored part of `outcome`. Throws
  // CheckpointUnusable on every rank alike when the checkpoint cannot be read back.
  void Start(bool resume, TrialOutcome* outcome) {
    BroadcastModelState(*model_, collectives_);
    if (resume && !options_.checkpoint_path.empty()) LoadCheckpoint(outcome);
  }

  // Runs the remaining epochs, asking `gate` after each; fills `outcome` (not duration_s).
  Status Run(EpochGate& gate, TrialOutcome* outcome) {
    model_->SetTraining(true);
    for (int64_t epoch = position_.epochs_done + 1; epoch <= options_.epochs; ++epoch) {
      const Clock::time_point start = Clock::now();
      const StepResult trained = TrainEpoch(epoch, gate);
      if (!trained.failure.empty()) {
        outcome->status = TrialStatus::kFailed;
        outcome->message = trained.failure;
        return Status::Ok();
      }
      if (trained.interrupted) {
        SyncBuffers(*model_, collectives_);
        SaveCheckpoint(outcome->curve);
        outcome->status = TrialStatus::kRunning;
        outcome->message = "interrupted at epoch " + std::to_string(epoch) + " step " +
                           std::to_string(position_.next_step) + "; checkpoint saved";
        return Status::Ok();
      }
      SyncBuffers(*model_, collectives_);
      std::string local_error;
      // [failed ranks, epoch time of rank 0, ..., of rank n-1, the task's evaluation sums]
      const size_t times = 1;
      const size_t task_sums = times + static_cast<size_t>(collectives_.size());
      std::vector<double> sums(task_sums + task_.EvaluationSize(), 0.0);
      try {
        const Dataset& validation = task_.validation_data();
        Evaluate(task_, *model_, validation,
                 ShardOf({0, validation.size()}, collectives_.rank(), collectives_.size()),
                 options_.device, sums.data() + task_sums);
      } catch (const std::exception& error) {
        ThrowIfDeviceFailure(error, " while validating epoch " + std::to_string(epoch),
                             collectives_.rank());
        local_error = DescribeException(error, options_.out_of_memory_hint);
      }
      sums[0] = local_error.empty() ? 0.0 : 1.0;
      sums[times + collectives_.rank()] = SecondsSince(start);
      collectives_.AllreduceSum(sums.data(), sums.size());
      if (sums[0] > 0.0) {
        outcome->status = TrialStatus::kFailed;
        outcome->message = "exception while validating epoch " + std::to_string(epoch) + " on " +
                           AgreeOnError(collectives_, local_error);
        return Status::Ok();
      }
      const Evaluation evaluation =
          task_.Summarize(std::vector<double>(sums.begin() + task_sums, sums.end()), "val_");
      std::map<std::string, double> values(evaluation.metrics.begin(), evaluation.metrics.end());
      values["train_loss"] = trained.loss_sum / static_cast<double>(task_.train_data().size());
      values["epoch_time_s"] = *std::max_element(sums.begin() + times, sums.begin() + task_sums);
      EpochMetrics metrics;
      metrics.epoch = epoch;
      for (const std::string& name : setup_.metric_names) {
        const auto found = values.find(name);
        if (found == values.end()) return Status::Failure("the task reports no metric " + name);
        metrics.values.push_back(found->second);
      }
      outcome->curve.push_back(metrics);
      position_ = {epoch, 0, 0.0};
      const bool interval_due =
          options_.checkpoint_interval > 0 && epoch % options_.checkpoint_interval == 0;
      const bool saved = interval_due || epoch == options_.epochs;
      if (saved) SaveCheckpoint(outcome->curve);
      const EpochVerdict verdict = gate.AfterEpoch(trial_.trial_id, metrics);
      if (verdict == EpochVerdict::kInterrupt && epoch < options_.epochs) {
        if (!saved) SaveCheckpoint(outcome->curve);
        outcome->status = TrialStatus::kRunning;
        outcome->message =
            "interrupted after epoch " + std::to_string(epoch) + "; checkpoint saved";
        return Status::Ok();
      }
      if (verdict == EpochVerdict::kStop && epoch < options_.epochs) {
        outcome->status = TrialStatus::kStopped;
        outcome->message = "stopped by scheduler after epoch " + std::to_string(epoch);
        break;
      }
    }
    return SaveWeights();
  }

 private:
  struct StepResult {
    double loss_sum = 0.0;  // summed over the epoch's samples on all ranks
    std::string failure;    // why the trial failed, when it did
    bool interrupted = false;
  };

  // Trains epoch `epoch` from position_.next_step on. Every rank ends at the same step: at the end
  // of the epoch, at a non-finite loss or an exception on any rank (failure), or after the step at
  // which any rank's gate asked for an interruption (position_ then points past that step).
  StepResult TrainEpoch(int64_t epoch, EpochGate& gate) {
    sampler_.SetEpoch(epoch);
    StepResult result;
    result.loss_sum = position_.partial_loss_sum;
    // Joined on every way out of the epoch (end, failure, interruption).
    BatchPrefetcher batches(task_.train_data(), sampler_, position_.next_step,
                            options_.prefetch_batches);
    const int64_t steps_per_epoch = sampler_.num_steps();
    for (int64_t step = position_.next_step; step < sampler_.num_steps(); ++step) {
      const auto local_count = static_cast<double>(
          ShardOf(sampler_.GlobalBatch(step), collectives_.rank(), collectives_.size()).size());
      const auto global_count = static_cast<double>(sampler_.GlobalBatch(step).size());
      // Dropout masks depend on (trial, rank, epoch, step) only, so a resumed trial draws the
      // masks the uninterrupted one would have.
      torch::manual_seed(
          DeriveSeed(trial_.seed, static_cast<uint64_t>(collectives_.rank()) + 1,
                     (static_cast<uint64_t>(epoch) << 32) ^ static_cast<uint64_t>(step)));
      float extras[kStepExtras] = {0.0f, 0.0f, 0.0f};
      const auto grad_scale = static_cast<float>(local_count / global_count);
      if (options_.overlap) buckets_->BeginStep(collectives_, grad_scale);
      const std::string where =
          " at epoch " + std::to_string(epoch) + " step " + std::to_string(step + 1);
      std::string local_error;
      try {
        optimizer_->zero_grad();
        if (options_.hooks != nullptr) {
          options_.hooks->BeforeStep(trial_, collectives_.rank(), epoch, step);
        }
        const Batch batch = batches.Next();
        // This rank's share of the global batch's mean loss; the group's sum is that mean.
        if (batch.size() > 0) {
          const Batch on_device = batch.To(options_.device);
          const torch::Tensor loss = task_.Loss(model_->Forward(on_device), on_device);
          loss.backward();
          extras[kLossShare] = static_cast<float>(loss.item<double>() * local_count / global_count);
        }
      } catch (const std::exception& error) {
        ThrowIfDeviceFailure(error, where, collectives_.rank());
        local_error = DescribeException(error, options_.out_of_memory_hint);
        extras[kFailed] = 1.0f;
        optimizer_->zero_grad();
      }
      extras[kInterrupt] = gate.InterruptRequested() ? 1.0f : 0.0f;
      if (options_.overlap) {
        buckets_->FinishStep(extras);
      } else {
        buckets_->AllreduceGradients(collectives_, grad_scale, extras);
      }
      if (extras[kFailed] > 0.0f) {
        result.failure = "exception" + where + " on " + AgreeOnError(collectives_, local_error);
        return result;
      }
      if (!std::isfinite(extras[kLossShare])) {
        result.failure = "non-finite loss" + where;
        return result;
      }
      if (hyperparameters_.warmup_ratio > 0.0) {
        const double factor = WarmupLinearDecayFactor((epoch - 1) * steps_per_epoch + step,
                                                      options_.epochs * steps_per_epoch,
                                                      hyperparameters_.warmup_ratio);
        for (auto& group : optimizer_->param_groups()) {
          group.options().set_lr(hyperparameters_.lr * factor);
        }
      }
      optimizer_->step();
      result.loss_sum += static_cast<double>(extras[kLossShare]) * global_count;
      if (extras[kInterrupt] > 0.0f && step + 1 < sampler_.num_steps()) {
        position_ = {epoch - 1, step + 1, result.loss_sum};
        result.interrupted = true;
        return result;
      }
    }
    return result;
  }

  // Leader only: model, optimizer, position and curve, replacing the previous checkpoint.
  void SaveCheckpoint(const std::vector<EpochMetrics>& curve) {
    if (options_.checkpoint_path.empty() || collectives_.rank() != 0) return;
    torch::serialize::OutputArchive archive;
    torch::serialize::OutputArchive model_archive;
    model_->Save(model_archive);
    archive.write("model", model_archive);
    torch::serialize::OutputArchive optimizer_archive;
    optimizer_->save(optimizer_archive);
    archive.write("optimizer", optimizer_archive);
    archive.write("trial_id", c10::IValue(trial_.trial_id));
    archive.write("params", c10::IValue(DescribeTrial(trial_)));
    archive.write("epochs_done", c10::IValue(position_.epochs_done));
    archive.write("next_step", c10::IValue(position_.next_step));
    archive.write("partial_loss_sum", c10::IValue(position_.partial_loss_sum));
    const auto metrics = static_cast<int64_t>(setup_.metric_names.size());
    torch::Tensor table =
        torch::zeros({static_cast<int64_t>(curve.size()), 1 + metrics}, torch::kFloat64);
    for (size_t row = 0; row < curve.size(); ++row) {
      table[static_cast<int64_t>(row)][0] = static_cast<double>(curve[row].epoch);
      for (int64_t m = 0; m < metrics; ++m) {
        table[static_cast<int64_t>(row)][1 + m] = curve[row].values[static_cast<size_t>(m)];
      }
    }
    archive.write("curve", table);
    SaveArchiveToFile(archive, options_.checkpoint_path);
  }

  // Collective: the leader reads the checkpoint file and broadcasts its bytes; every rank restores
  // the same state from them. A missing, unreadable or foreign checkpoint is ignored (the trial
  // starts from the beginning) on every rank alike.
  void LoadCheckpoint(TrialOutcome* outcome) {
    std::string bytes;
    if (collectives_.rank() == 0) {
      std::ifstream file(options_.checkpoint_path, std::ios::binary);
      if (file)
        bytes.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
    }
    uint64_t size = bytes.size();
    collectives_.Broadcast(&size, sizeof(size), 0);
    if (size == 0) return;
    bytes.resize(size);
    collectives_.Broadcast(bytes.data(), size, 0);
    try {
      torch::serialize::InputArchive archive;
      archive.load_from(bytes.data(), bytes.size(), options_.device);
      c10::IValue trial_id;
      c10::IValue params;
      archive.read("trial_id", trial_id);
      archive.read("params", params);
      c10::IValue epochs_done;
      c10::IValue next_step;
      c10::IValue partial_loss_sum;
      archive.read("epochs_done", epochs_done);
      archive.read("next_step", next_step);
      archive.read("partial_loss_sum", partial_loss_sum);
      // Population-based training: the copy of the parent's checkpoint at parent_epoch that the
      // coordinator put in this trial's place before dispatching it.
      const bool from_parent = trial_.parent_trial >= 0 &&
                               trial_id.toInt() == trial_.parent_trial &&
                               epochs_done.toInt() == trial_.parent_epoch && next_step.toInt() == 0;
      if (!from_parent &&
          (trial_id.toInt() != trial_.trial_id || params.toStringRef() != DescribeTrial(trial_))) {
        return;
      }
      torch::serialize::InputArchive model_archive;
      archive.read("model", model_archive);
      model_->Load(model_archive);
      // The optimizer's state (moments, momentum buffers) is the parent's; its settings (lr,
      // weight decay, ...) stay this trial's.
      std::vector<std::unique_ptr<torch::optim::OptimizerOptions>> own_options;
      for (auto& group : optimizer_->param_groups()) own_options.push_back(group.options().clone());
      torch::serialize::InputArchive optimizer_archive;
      archive.read("optimizer", optimizer_archive);
      optimizer_->load(optimizer_archive);
      if (from_parent) {
        auto& groups = optimizer_->param_groups();
        for (size_t g = 0; g < groups.size() && g < own_options.size(); ++g) {
          groups[g].set_options(std::move(own_options[g]));
        }
        position_ = {epochs_done.toInt(), 0, 0.0};
        outcome->curve.clear();  // the parent's epochs are the parent's rows
        outcome->resumed_epochs = position_.epochs_done;
        outcome->resumed_step = 0;
        return;
      }
      torch::Tensor table;
      archive.read("curve", table);
      std::vector<EpochMetrics> curve;
      for (int64_t row = 0; row < table.size(0); ++row) {
        EpochMetrics metrics;
        metrics.epoch = table[row][0].item<int64_t>();
        for (int64_t m = 1; m < table.size(1); ++m) {
          metrics.values.push_back(table[row][m].item<double>());
        }
        curve.push_back(std::move(metrics));
      }
      position_ = {epochs_done.toInt(), next_step.toInt(), partial_loss_sum.toDouble()};
      outcome->curve = std::move(curve);
      outcome->resumed_epochs = position_.epochs_done;
      outcome->resumed_step = position_.next_step;
    } catch (const std::exception& error) {
      throw CheckpointUnusable(options_.checkpoint_path + ": " + error.what());
    }
  }

  Status SaveWeights() {
    if (options_.save_weights_path.empty() || collectives_.rank() != 0) return Status::Ok();
    const std::filesystem::path path(options_.save_weights_path);
    std::error_code ec;
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) {
      return Status::Failure(path.parent_path().string() + ": cannot create: " + ec.message());
    }
    model_->Export(path.string());
    return Status::Ok();
  }

  const TrainingSetup& setup_;
  ModelTask& task_;
  const TrialSpec& trial_;
  GroupCollectives& collectives_;
  const TrainOptions& options_;
  const Hyperparameters hyperparameters_;
  std::unique_ptr<TrainableModel> model_;
  DistributedSampler sampler_;
  std::vector<torch::Tensor> parameters_;
  std::unique_ptr<GradientBuckets> buckets_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  TrainingPosition position_;
};

}  // namespace

Status RunTrial(const TrainingSetup& setup, const TrialSpec& trial, GroupCollectives& collectives,
                EpochGate& gate, const TrainOptions& options, TrialOutcome* outcome,
                std::unique_ptr<TrainableModel>* trained_model) {
  const Clock::time_point start = Clock::now();
  *outcome = TrialOutcome();
  Hyperparameters h;
  HPO_RETURN_IF_ERROR(ReadHyperparameters(setup.hyperparameters, trial.params, &h));
  if (setup.threads_per_rank < 1) {
    return Status::BadInput("threads_per_rank must be >= 1, got " +
                            std::to_string(setup.threads_per_rank));
  }
  ModelTask& task = *setup.task;
  if (task.train_data().size() == 0 || task.validation_data().size() == 0) {
    return Status::BadInput("the task has no training or no validation samples");
  }
  SetComputeThreads(setup.threads_per_rank);
  // Builds the model and the run; a BadInput from the task (a hyperparameter value it cannot
  // take) is the same on every rank and returned as it is.
  const auto build = [&](std::unique_ptr<TrialRun>* run, std::string* local_error) -> Status {
    try {
      std::unique_ptr<TrainableModel> model;
      const Status built = BuildSeededModel(task, trial.params, trial.seed, &model);
      if (built.code() == Status::Code::kBadInput) return built;
      if (!built.ok()) {
        *local_error = built.message();
      } else {
        *run = std::make_unique<TrialRun>(setup, trial, collectives, h, options, std::move(model));
      }
    } catch (const std::exception& error) {
      ThrowIfDeviceFailure(error, " while building the model", collectives.rank());
      *local_error = DescribeException(error, options.out_of_memory_hint);
    }
    return Status::Ok();
  };
  std::unique_ptr<TrialRun> run;
  std::string local_error;
  HPO_RETURN_IF_ERROR(build(&run, &local_error));
  const std::string build_error = AgreeOnError(collectives, local_error);
  Status status;
  if (!build_error.empty()) {
    outcome->status = TrialStatus::kFailed;
    outcome->message = "exception while building the model on " + build_error;
  } else {
    try {
      run->Start(options.resume, outcome);
    } catch (const CheckpointUnusable& error) {
      // The model and optimizer may be half-loaded: rebuild them and train from the beginning.
      if (collectives.rank() == 0) {
        PrintDiagnostic("hpo: warning: trial " + std::to_string(trial.trial_id) +
                        " starts over: " + error.what());
      }
      *outcome = TrialOutcome();
      run.reset();
      HPO_RETURN_IF_ERROR(build(&run, &local_error));
      if (run == nullptr) throw std::runtime_error("rebuilding the model failed: " + local_error);
      run->Start(false, outcome);
    }
    status = run->Run(gate, outcome);
    if (trained_model != nullptr) *trained_model = run->TakeModel();
  }
  outcome->duration_s = SecondsSince(start);
  return status;
}

Status EvaluateSavedModel(const TrainingSetup& setup, const Assignment& params,
                          const std::string& weights_path, Evaluation* evaluation) {
  ModelTask& task = *setup.task;
  const Dataset* test = task.test_data();
  if (test == nullptr || test->size() == 0) return Status::BadInput("the task has no test samples");
  std::error_code ec;
  if (!std::filesystem::exists(weights_path, ec)) {
    return Status::Failure(weights_path + ": no such file");
  }
  try {
    std::unique_ptr<TrainableModel> model;
    HPO_RETURN_IF_ERROR(BuildSeededModel(task, params, 0, &model));
    model->Import(weights_path);
    std::vector<double> sums(task.EvaluationSize(), 0.0);
    Evaluate(task, *model, *test, {0, test->size()}, torch::kCPU, sums.data());
    *evaluation = task.Summarize(sums, "test_");
  } catch (const std::exception& error) {
    return Status::Failure(weights_path + ": " + DescribeException(error, ""));
  }
  return Status::Ok();
}

}  // namespace hpo
