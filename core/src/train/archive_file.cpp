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
  module.save(bytes);
  WriteBytes(bytes.str(), path);
}

void LoadModuleFromFile(torch::nn::Module& module, const std::string& path) {
  const std::vector<torch::Tensor> parameters = module.parameters();
  torch::serialize::InputArchive archive;
  archive.load_from(path, parameters.empty() ? torch::Device(torch::kCPU) : parameters[0].device());
  module.load(archive);
}

}  // namespace hpo
