// Writing torch archives to files without letting a full disk end the process: torch's own file
// writer reports a failed write by throwing from its destructor (std::terminate). These serialize
// to memory and write the bytes with WriteFileAtomically (a temporary file, fsync, rename).
#pragma once

#include <torch/script.h>
#include <torch/serialize.h>

#include <string>

namespace hpo {

// Writes `archive` to `path` atomically: `path` holds the old file or the new one, never a part.
// Throws std::runtime_error("writing PATH: reason") when the file cannot be written.
void SaveArchiveToFile(torch::serialize::OutputArchive& archive, const std::string& path);

// The same for a TorchScript module (torch.jit.load reads the file).
void SaveScriptModuleToFile(const torch::jit::Module& module, const std::string& path);

}  // namespace hpo
