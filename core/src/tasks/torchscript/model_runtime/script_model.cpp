#include "tasks/torchscript/model_runtime/script_model.hpp"

#include <filesystem>
#include <map>
#include <stdexcept>
#include <utility>

namespace hpo {
namespace {

// The module's parameters and buffers by name, as nn::Module::save names them ("fc.weight").
template <typename NamedList>
void WriteNamed(const NamedList& list, bool is_buffer, torch::serialize::OutputArchive& archive) {
  for (const auto& entry : list) archive.write(entry.name, entry.value, is_buffer);
}

template <typename NamedList>
void ReadNamed(const NamedList& list, bool is_buffer, torch::serialize::InputArchive& archive) {
  torch::NoGradGuard no_grad;
  for (const auto& entry : list) {
    torch::Tensor stored;
    archive.read(entry.name, stored, is_buffer);
    torch::Tensor target = entry.value;
    target.copy_(stored);
  }
}

}  // namespace

Status ScriptModel::Load(const std::string& path, std::unique_ptr<ScriptModel>* model) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    return Status::BadInput(path + ": no such TorchScript file");
  }
  try {
    model->reset(new ScriptModel(torch::jit::load(path, torch::kCPU)));
  } catch (const std::exception& load_error) {
    std::string reason = load_error.what();
    reason = reason.substr(0, reason.find('\n'));
    return Status::BadInput(path + ": not a TorchScript module saved with torch.jit.save (" +
                            reason + ")");
  }
  return Status::Ok();
}

std::vector<torch::Tensor> ScriptModel::Parameters() {
  std::vector<torch::Tensor> tensors;
  for (const torch::Tensor& parameter : module_.parameters()) tensors.push_back(parameter);
  return tensors;
}

std::vector<torch::Tensor> ScriptModel::Buffers() {
  std::vector<torch::Tensor> tensors;
  for (const torch::Tensor& buffer : module_.buffers()) tensors.push_back(buffer);
  return tensors;
}

torch::Tensor ScriptModel::Forward(const Batch& batch) {
  std::vector<torch::jit::IValue> inputs(batch.inputs.begin(), batch.inputs.end());
  const torch::jit::IValue output = module_.forward(std::move(inputs));
  if (!output.isTensor()) {
    throw std::runtime_error("the TorchScript module's forward returned " + output.tagKind() +
                             ", not a tensor");
  }
  return output.toTensor();
}

void ScriptModel::Save(torch::serialize::OutputArchive& archive) {
  WriteNamed(module_.named_parameters(), false, archive);
  WriteNamed(module_.named_buffers(), true, archive);
}

void ScriptModel::Load(torch::serialize::InputArchive& archive) {
  ReadNamed(module_.named_parameters(), false, archive);
  ReadNamed(module_.named_buffers(), true, archive);
}

void ScriptModel::Import(const std::string& path) {
  torch::jit::Module saved = torch::jit::load(path, torch::kCPU);
  torch::NoGradGuard no_grad;
  const auto copy = [](const auto& from, const auto& to) {
    std::map<std::string, torch::Tensor> stored;
    for (const auto& entry : from) stored.emplace(entry.name, entry.value);
    for (const auto& entry : to) {
      const auto found = stored.find(entry.name);
      if (found == stored.end() || !found->second.sizes().equals(entry.value.sizes())) {
        throw std::runtime_error("it has no " + entry.name + " of the model's shape");
      }
      torch::Tensor target = entry.value;
      target.copy_(found->second);
    }
  };
  copy(saved.named_parameters(), module_.named_parameters());
  copy(saved.named_buffers(), module_.named_buffers());
}

}  // namespace hpo
