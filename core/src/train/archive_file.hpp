// Writing torch archives to files without letting a full disk end the process: torch's own file
// writer reports a failed write by throwing from its destructor (std::terminate). These serialize
// to memory and write the bytes with WriteFileAtomically (a temporary file, fsync, rename). And
// reading a module's file back onto whichever device the module is on now.
#pragma once

#include <torch/nn/module.h>
#include <torch/script.h>
#include <torch/serialize.h>

#include <string>

namespace hpo {

// Writes `archive` to `path` atomically: `path` holds the old file or the new one, never a part.
// Throws std::runtime_error("writing PATH: reason") when the file cannot be written.
void SaveArchiveToFile(torch::serialize::OutputArchive& archive, const std::string& path);

// The same for a TorchScript module (torch.jit.load reads the file), its tensors on the CPU
// whatever device the module is on (the module itself stays where it is).
void SaveScriptModuleToFile(const torch::jit::Module& module, const std::string& path);

// Writes `module` to `archive` as module.save does, every parameter and buffer copied to the CPU:
// an exported model loads on a machine without a GPU (torch.jit.load needs no map_location).
void SaveModuleOnCpu(const torch::nn::Module& module, torch::serialize::OutputArchive& archive);

// Reads the parameters and buffers that `module.save` wrote to `path` into `module`, onto the
// device of the module's first parameter (the CPU for a module without one): a model saved from a
// GPU loads into a model on the CPU, and the other way round. Throws what torch throws.
void LoadModuleFromFile(torch::nn::Module& module, const std::string& path);

}  // namespace hpo
