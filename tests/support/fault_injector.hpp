// FaultInjector: the failure tests' fault, injected through the trainer's seam (TrainingHooks) —
// by the trainer unit tests directly (TrainOptions::hooks) and by tests/mpi/programs/
// hpo_with_faults.cpp into a whole sweep. It throws at the first training step of one epoch on one
// group rank of one trial's first attempt (a retry runs clean): std::bad_alloc for an
// out-of-memory fault, std::runtime_error "injected fault (HPO_INJECT_FAULT)" for an exception,
// and for a CUDA fault a real device-side assert where CUDA is available (torch then throws "CUDA
// error: device-side assert triggered", and the process's CUDA context stays broken), else the
// c10::Error torch throws for a failed CUDA call, with the text CUDA gives it.
// Immutable once made, so any rank's training thread may call it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <new>
#include <stdexcept>
#include <string>

#include <torch/torch.h>

#include "hpo/status.hpp"
#include "train/training_hooks.hpp"

namespace hpo {

struct Fault {
  enum class Kind { kException, kOutOfMemory, kCuda };
  Kind kind = Kind::kException;
  int64_t trial_id = 0;
  int64_t epoch = 1;
  int rank = 0;
};

class FaultInjector final : public TrainingHooks {
 public:
  explicit FaultInjector(const Fault& fault) : fault_(fault) {}

  // HPO_INJECT_FAULT's value, KIND:TRIAL:EPOCH:RANK with KIND exception, oom or cuda; BadInput
  // quoting it otherwise.
  static Status Parse(const std::string& text, Fault* fault) {
    char kind[16] = {0};
    long long trial = 0;
    long long epoch = 0;
    int rank = 0;
    char extra = 0;
    if (std::sscanf(text.c_str(), "%15[a-z]:%lld:%lld:%d%c", kind, &trial, &epoch, &rank, &extra) !=
            4 ||
        (std::string(kind) != "exception" && std::string(kind) != "oom" &&
         std::string(kind) != "cuda")) {
      return Status::BadInput("HPO_INJECT_FAULT=" + text +
                              ": expected KIND:TRIAL:EPOCH:RANK with KIND exception, oom or cuda");
    }
    fault->kind = std::string(kind) == "oom"    ? Fault::Kind::kOutOfMemory
                  : std::string(kind) == "cuda" ? Fault::Kind::kCuda
                                                : Fault::Kind::kException;
    fault->trial_id = trial;
    fault->epoch = epoch;
    fault->rank = rank;
    return Status::Ok();
  }

  void BeforeStep(const TrialSpec& trial, int group_rank, int64_t epoch, int64_t step) override {
    if (trial.trial_id != fault_.trial_id || trial.attempt != 0 || epoch != fault_.epoch ||
        group_rank != fault_.rank || step != 0) {
      return;
    }
    if (fault_.kind == Fault::Kind::kOutOfMemory) throw std::bad_alloc();
    if (fault_.kind == Fault::Kind::kCuda) BreakCuda();
    throw std::runtime_error("injected fault (HPO_INJECT_FAULT)");
  }

 private:
  // On a GPU, an index far past a one-element tensor's end: the indexing kernel's assert fails on
  // the device, and reading the result back throws. Without one, torch's error for a failed call.
  static void BreakCuda() {
    if (!torch::cuda::is_available()) {
      throw c10::Error(c10::SourceLocation{__func__, __FILE__, static_cast<uint32_t>(__LINE__)},
                       "CUDA error: an illegal memory access was encountered (HPO_INJECT_FAULT)");
    }
    const torch::TensorOptions on_gpu = torch::TensorOptions().device(torch::kCUDA);
    const torch::Tensor index = torch::full({1}, int64_t{1} << 20, on_gpu.dtype(torch::kLong));
    static_cast<void>(torch::zeros({1}, on_gpu).index({index}).sum().item<float>());
    throw std::runtime_error("HPO_INJECT_FAULT=cuda: the index out of bounds did not fail the GPU");
  }

  const Fault fault_;
};

}  // namespace hpo
