// What the coordinator benchmarks (dispatch_overhead, verdict_latency) share: a sweep config from
// a YAML text, the world's group layout, a rank-0 coordinator over a bench study, and every rank's
// samples gathered on rank 0. Ends the job on a failure, as a benchmark has no caller to return
// it to.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "coord/coordinator.hpp"
#include "harness.hpp"
#include "hpo/config.hpp"
#include "hpo/mpi/communicator.hpp"
#include "hpo/mpi/group_layout.hpp"
#include "hpo/status.hpp"
#include "runtime/sweep_session.hpp"
#include "search/searcher.hpp"
#include "study/study_file.hpp"

namespace hpo::bench {

inline void EndJobUnlessOk(const Status& status) {
  if (!status.ok()) AbortJob(status.exit_code(), status.message());
}

// FOLDER/study.h5 with the config's parameters and metrics (string parameters 8 bytes wide),
// minimising val_loss (rank 0 only).
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
  EndJobUnlessOk(StudyWriter::Create((folder / "study.h5").string(), layout, attributes, &study));
  return study;
}

// TEXT with each (placeholder, value) pair's first placeholder replaced, parsed as NAME.
inline SweepConfig ParseBenchConfig(std::string text, const std::string& name,
                                    const std::vector<std::pair<std::string, std::string>>& fill) {
  for (const auto& [placeholder, value] : fill) {
    text.replace(text.find(placeholder), placeholder.size(), value);
  }
  SweepConfig config;
  EndJobUnlessOk(ParseConfig(text, name, &config));
  return config;
}

inline GroupLayout BenchLayout(const Communicator& world, int ranks_per_trial) {
  GroupLayout layout;
  EndJobUnlessOk(ComputeGroupLayout(world, ranks_per_trial, &layout));
  return layout;
}

// A fresh folder under the temporary directory, named after the benchmark and the process.
inline std::filesystem::path BenchFolder(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("hpo-bench-" + name + "-" + std::to_string(getpid()));
}

// On rank 0: the config's searcher (passed through WRAP when one is given) coordinating SWEEP
// over a bench study in FOLDER, timed by bench::NowSeconds.
inline void CoordinateOnRoot(
    const SweepConfig& config, const std::filesystem::path& folder, SweepSession* sweep,
    const std::function<std::unique_ptr<Searcher>(std::unique_ptr<Searcher>)>& wrap = nullptr) {
  CoordinatorDeps deps;
  EndJobUnlessOk(MakeSearcher(config, &deps.searcher));
  if (wrap) deps.searcher = wrap(std::move(deps.searcher));
  deps.clock = NowSeconds;
  sweep->Coordinate(config, CreateBenchStudy(config, folder), std::move(deps));
}

// Every rank's MINE, concatenated in rank order on rank 0 (empty elsewhere). Collective.
inline std::vector<double> GatherOnRoot(const Communicator& world,
                                        const std::vector<double>& mine) {
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<size_t>(world.size()));
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, world.get());
  std::vector<int> offsets(counts.size(), 0);
  int total = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    offsets[i] = total;
    total += counts[i];
  }
  std::vector<double> all(static_cast<size_t>(world.rank() == 0 ? total : 0));
  MPI_Gatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE,
              0, world.get());
  return all;
}

}  // namespace hpo::bench
