// A study file for the coordinator benchmarks (rank 0 only): FOLDER/study.h5 with the config's
// parameters and metrics (string parameters 8 bytes wide), minimising val_loss. Ends the job on
// failure.
#pragma once

#include <filesystem>
#include <memory>

#include "hpo/config.hpp"
#include "hpo/mpi/communicator.hpp"
#include "hpo/status.hpp"
#include "study/study_file.hpp"

namespace hpo::bench {

inline std::unique_ptr<StudyWriter> CreateBenchStudy(const SweepConfig& config,
                                                     const std::filesystem::path& folder) {
  std::filesystem::create_directories(folder);
  StudyLayout layout;
  for (const ParameterSpec& spec : config.sweep.parameters) {
    layout.params.push_back({spec.name, spec.type, spec.type == ParamType::kString ? 8u : 0u});
  }
  layout.metric_names = config.metric_names;
  StudyAttributes attributes;
  attributes.metric_name = "val_loss";
  attributes.metric_goal = "minimize";
  std::unique_ptr<StudyWriter> study;
  const Status created =
      StudyWriter::Create((folder / "study.h5").string(), layout, attributes, &study);
  if (!created.ok()) AbortJob(created.exit_code(), created.message());
  return study;
}

}  // namespace hpo::bench
