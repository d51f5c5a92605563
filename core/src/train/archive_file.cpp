#include "train/archive_file.hpp"

#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "common/file_io.hpp"

namespace hpo {

namespace {

void WriteBytes(const std::string& bytes, const std::string& path) {
  const std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  const Status written = WriteFileAtomically(path, bytes.data(), bytes.size());
  if (!written.ok()) throw std::runtime_error(written.message());
}

}  // namespace

void SaveArchiveToFile(torch::serialize::OutputArchive& archive, const std::string& path) {
  std::ostringstream bytes;
  archive.save_to(bytes);
  WriteBytes(bytes.str(), path);
}

void SaveScriptModuleToFile(const torch::jit::Module& module, const std::string& path) {
  std::ostringstream bytes;
  const torch::jit::parameter_list parameters = module.parameters();
  if (parameters.size() == 0 || (*parameters.begin()).is_cpu()) {
    module.save(bytes);
  } else {
    torch::jit::Module on_cpu = module.deepcopy();
    on_cpu.to(torch::kCPU);
    on_cpu.save(bytes);
  }
  WriteBytes(bytes.str(), path);
}

void SaveModuleOnCpu(const torch::nn::Module& module, torch::serialize::OutputArchive& archive) {
  // A copy keeps the original's requires_grad, so that the file is the same from any device.
  const auto on_cpu = [](const torch::Tensor& tensor) {
    torch::Tensor copy = tensor.detach().to(torch::kCPU);
    copy.set_requires_grad(tensor.requires_grad());
    return copy;
  };
  for (const auto& parameter : module.named_parameters(/*recurse=*/false)) {
    archive.write(parameter.key(), on_cpu(parameter.value()));
  }
  for (const auto& buffer : module.named_buffers(/*recurse=*/false)) {
    archive.write(buffer.key(), on_cpu(buffer.value()), /*is_buffer=*/true);
  }
  for (const auto& child : module.named_children()) {
    if (!child.value()->is_serializable()) continue;
    torch::serialize::OutputArchive child_archive(archive.compilation_unit());
    SaveModuleOnCpu(*child.value(), child_archive);
    archive.write(child.key(), child_archive);
  }
}

void LoadModuleFromFile(torch::nn::Module& module, const std::string& path) {
  const std::vector<torch::Tensor> parameters = module.parameters();
  torch::serialize::InputArchive archive;
  archive.load_from(path, parameters.empty() ? torch::Device(torch::kCPU) : parameters[0].device());
  module.load(archive);
}

}  // namespace hpo
