// Coordinator overhead, two ways. Run under mpirun:
//   mpirun -np 4 hpo_bench_dispatch [TRIALS] [RANKS_PER_TRIAL] [SLEEP_MIN_S SLEEP_MAX_S]
// Without a sleep range, trials are no-ops: trials per second, microseconds per trial, and the
// gap from a group finishing a trial to it starting the next (result to rank 0, study append +
// flush, next suggestion, reply, broadcast to the group). With a sleep range, every rank of a
// group "trains" for a duration drawn uniformly from it (from the trial seed, so the same on all
// its ranks), and the benchmark reports slot utilization = time ranks spent in trials / (ranks x
// wall time): what the coordinator and dispatch cost the cluster (rank 0 also trains), and the
// dispatch share = rank time spent between a group's trials / (ranks x wall time); the rest of the
// shortfall from 1 is the drain at the end (groups idle while the last trials finish).
// No-op runs also report whether the cost per trial stays flat as the study grows: the wall time
// per trial over the first 10% of trials to finish and over the last 10%, and their ratio.
// Check: the study file holds exactly TRIALS rows afterwards.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "bench_study.hpp"
#include "coord/coordinator.hpp"
#include "harness.hpp"
#include "hpo/config.hpp"
#include "hpo/mpi/communicator.hpp"
#include "hpo/mpi/group_layout.hpp"
#include "hpo/task_catalog.hpp"
#include "mpi/control_plane.hpp"
#include "runtime/sweep_session.hpp"
#include "study/study_file.hpp"

namespace {

constexpr const char* kConfig = R"(sweep:
  method: random
  metric: {name: val_loss, goal: minimize}
  run_cap: RUN_CAP
  parameters:
    lr: {distribution: log_uniform_values, min: 0.0001, max: 0.1}
    optimizer: {values: [sgd, adam, adamw]}
    width: {distribution: int_uniform, min: 8, max: 64}
task: synthetic
)";

}  // namespace

int main(int argc, char** argv) {
  using namespace hpo;
  std::unique_ptr<MpiSession> session;
  if (!MpiSession::Start(&argc, &argv, &session).ok()) return 1;
  const int64_t trials = argc > 1 ? std::stoll(argv[1]) : 2000;
  const int ranks_per_trial = argc > 2 ? std::stoi(argv[2]) : 1;
  const double sleep_min_s = argc > 4 ? std::stod(argv[3]) : 0.0;
  const double sleep_max_s = argc > 4 ? std::stod(argv[4]) : 0.0;

  const Communicator world = Communicator::World();
  std::string text = kConfig;
  text.replace(text.find("RUN_CAP"), 7, std::to_string(trials));
  SweepConfig config;
  Status parsed = ParseConfig(text, "dispatch_overhead.yaml", &config);
  if (!parsed.ok()) AbortJob(parsed.exit_code(), parsed.message());
  GroupLayout layout;
  Status laid_out = ComputeGroupLayout(world, ranks_per_trial, &layout);
  if (!laid_out.ok()) AbortJob(laid_out.exit_code(), laid_out.message());

  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() / ("hpo-bench-dispatch-" + std::to_string(getpid()));
  SweepSession sweep(world, layout);
  if (world.rank() == 0) {
    CoordinatorDeps deps;
    Status made = MakeSearcher(config, &deps.searcher);
    if (!made.ok()) AbortJob(made.exit_code(), made.message());
    deps.clock = bench::NowSeconds;
    sweep.Coordinate(config, bench::CreateBenchStudy(config, folder), std::move(deps));
  }
  sweep.Start();

  MPI_Barrier(world.get());
  const double start = bench::NowSeconds();
  LeaderChannel channel(sweep.control());
  std::vector<double> gaps_ms;
  std::vector<double> finish_s;  // leaders: when each of its trials finished, since `start`
  double finished_at = -1.0;
  double busy_s = 0.0;
  for (;;) {
    ControlMessage assignment;
    if (layout.rank_in_group == 0) {
      ControlMessage request;
      request.kind = MessageKind::kRequestTrial;
      assignment = channel.Exchange(request);
    }
    BroadcastMessage(layout.group_comm, 0, &assignment);
    if (finished_at >= 0 && layout.rank_in_group == 0 && assignment.kind == MessageKind::kTrial) {
      gaps_ms.push_back((bench::NowSeconds() - finished_at) * 1e3);
    }
    if (assignment.kind == MessageKind::kNoMoreTrials) break;
    if (sleep_max_s > 0.0) {
      const double u = static_cast<double>(assignment.trial.seed >> 11) * 0x1.0p-53;
      const double duration = sleep_min_s + (sleep_max_s - sleep_min_s) * u;
      const double began = bench::NowSeconds();
      std::this_thread::sleep_for(std::chrono::duration<double>(duration));
      busy_s += bench::NowSeconds() - began;
    }
    finished_at = bench::NowSeconds();
    if (layout.rank_in_group == 0) {
      finish_s.push_back(finished_at - start);
      ControlMessage done;
      done.kind = MessageKind::kTrialResult;
      done.result.trial_id = assignment.trial.trial_id;
      done.result.status = TrialStatus::kCompleted;
      done.result.params = assignment.trial.params;
      // One epoch with a value for every metric the study has (the task's, in its order).
      done.result.curve = {{1, std::vector<double>(config.metric_names.size(), 0.5)}};
      channel.Send(done);
    }
  }
  MPI_Barrier(world.get());
  const double elapsed = bench::NowSeconds() - start;

  double total_busy_s = 0.0;
  MPI_Reduce(&busy_s, &total_busy_s, 1, MPI_DOUBLE, MPI_SUM, 0, world.get());

  // Gather every leader's gaps on rank 0.
  int count = static_cast<int>(gaps_ms.size());
  std::vector<int> counts(world.size());
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, world.get());
  std::vector<int> offsets(world.size(), 0);
  int total = 0;
  for (int r = 0; r < world.size(); ++r) {
    offsets[r] = total;
    total += counts[r];
  }
  std::vector<double> all(world.rank() == 0 ? total : 0);
  MPI_Gatherv(gaps_ms.data(), count, MPI_DOUBLE, all.data(), counts.data(), offsets.data(),
              MPI_DOUBLE, 0, world.get());

  // And their finish times.
  count = static_cast<int>(finish_s.size());
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, world.get());
  total = 0;
  for (int r = 0; r < world.size(); ++r) {
    offsets[r] = total;
    total += counts[r];
  }
  std::vector<double> finishes(world.rank() == 0 ? total : 0);
  MPI_Gatherv(finish_s.data(), count, MPI_DOUBLE, finishes.data(), counts.data(), offsets.data(),
              MPI_DOUBLE, 0, world.get());

  sweep.Join();
  if (world.rank() == 0) {
    // Wall time per trial over the first and the last tenth of the trials to finish.
    std::sort(finishes.begin(), finishes.end());
    const size_t tenth = std::max<size_t>(1, finishes.size() / 10);
    double first_us = 0.0;
    double last_us = 0.0;
    if (finishes.size() >= 2 * tenth) {
      first_us = finishes[tenth - 1] / static_cast<double>(tenth) * 1e6;
      last_us = (finishes.back() - finishes[finishes.size() - tenth - 1]) /
                static_cast<double>(tenth) * 1e6;
    }
    const Status closed = sweep.study().Close();
    StudyContents contents;
    Status read = ReadStudy((folder / "study.h5").string(), &contents);
    const bool check =
        closed.ok() && read.ok() && static_cast<int64_t>(contents.trials.size()) == trials;
    const bench::Summary gap = bench::Summarize(all);
    if (sleep_max_s > 0.0) {
      bench::PrintResult(
          "slot_utilization",
          {{"ranks", std::to_string(world.size())},
           {"groups", std::to_string(layout.num_groups)},
           {"trials", std::to_string(trials)},
           {"sleep_s", bench::Number(sleep_min_s) + "-" + bench::Number(sleep_max_s)},
           {"wall_s", bench::Number(elapsed)},
           {"utilization", bench::Number(total_busy_s / (world.size() * elapsed))},
           {"dispatch_share", bench::Number(gap.mean * 1e-3 * static_cast<double>(gap.count) *
                                            ranks_per_trial / (world.size() * elapsed))},
           {"gap_ms_mean", bench::Number(gap.mean)},
           {"gap_ms_p99", bench::Number(gap.p99)}},
          check);
    } else {
      bench::PrintResult("dispatch_overhead",
                         {{"ranks", std::to_string(world.size())},
                          {"groups", std::to_string(layout.num_groups)},
                          {"trials", std::to_string(trials)},
                          {"trials_per_s", bench::Number(trials / elapsed)},
                          {"us_per_trial", bench::Number(elapsed / trials * 1e6)},
                          {"us_per_trial_first10", bench::Number(first_us)},
                          {"us_per_trial_last10", bench::Number(last_us)},
                          {"last_over_first", bench::Number(first_us > 0 ? last_us / first_us : 0)},
                          {"gap_ms_mean", bench::Number(gap.mean)},
                          {"gap_ms_p50", bench::Number(gap.p50)},
                          {"gap_ms_p99", bench::Number(gap.p99)}},
                         check);
    }
    std::filesystem::remove_all(folder);
    return check ? 0 : 1;
  }
  return 0;
}
