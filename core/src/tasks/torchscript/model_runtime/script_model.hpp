// A TorchScript module (torch.jit.script'ed nn.Module saved from Python) as a TrainableModel
// (hpo/model_task.hpp), so the DDP trainer trains it like any libtorch model: every parameter that
// requires grad is optimised, buffers are kept identical across the group, checkpoints hold its
// parameters and buffers by name, and Export writes a TorchScript file (torch.jit.load reads it).
// Forward calls the module's forward with the batch's inputs as positional arguments. Owns its
// module; used by one thread.
#pragma once

#include <torch/script.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "hpo/model_task.hpp"
#include "hpo/status.hpp"
#include "train/archive_file.hpp"

namespace hpo {

class ScriptModel final : public TrainableModel {
 public:
  // Loads `path` on the CPU. BadInput naming the file when it is missing or not a TorchScript
  // module.
  static Status Load(const std::string& path, std::unique_ptr<ScriptModel>* model);

  std::vector<torch::Tensor> Parameters() override;
  std::vector<torch::Tensor> Buffers() override;
  void SetTraining(bool training) override { module_.train(training); }
  void MoveTo(torch::Device device) override { module_.to(device); }
  // Throws std::runtime_error when forward does not return a tensor.
  torch::Tensor Forward(const Batch& batch) override;
  void Save(torch::serialize::OutputArchive& archive) override;
  void Load(torch::serialize::InputArchive& archive) override;
  void Export(const std::string& path) override { SaveScriptModuleToFile(module_, path); }
  void Import(const std::string& path) override;

 private:
  explicit ScriptModel(torch::jit::Module module) : module_(std::move(module)) {}

  torch::jit::Module module_;
};

}  // namespace hpo
