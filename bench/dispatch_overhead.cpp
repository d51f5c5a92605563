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

#include "bench_sweep.hpp"
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

using namespace hpo;

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

struct Options {
  int64_t trials = 2000;
  int ranks_per_trial = 1;
  double sleep_min_s = 0.0;
  double sleep_max_s = 0.0;  // 0: no-op trials
};

// What one rank saw of its trials.
struct RankTimes {
  std::vector<double> gaps_ms;   // leaders: from finishing a trial to being handed the next
  std::vector<double> finish_s;  // leaders: when each of its trials finished, since the start
  double busy_s = 0.0;           // time spent "training"
};

// Requests trials through the group's leader until there are no more, sleeping through each
// for a duration drawn from the trial's seed when a sleep range is given.
RankTimes RunTrials(const Options& options, const SweepConfig& config, const GroupLayout& layout,
                    SweepSession* sweep, double start) {
  LeaderChannel channel(sweep->control());
  RankTimes times;
  double finished_at = -1.0;
  for (;;) {
    ControlMessage assignment;
    if (layout.rank_in_group == 0) {
      ControlMessage request;
      request.kind = MessageKind::kRequestTrial;
      assignment = channel.Exchange(request);
    }
    BroadcastMessage(layout.group_comm, 0, &assignment);
    if (finished_at >= 0 && layout.rank_in_group == 0 && assignment.kind == MessageKind::kTrial) {
      times.gaps_ms.push_back((bench::NowSeconds() - finished_at) * 1e3);
    }
    if (assignment.kind == MessageKind::kNoMoreTrials) break;
    if (options.sleep_max_s > 0.0) {
      const double u = static_cast<double>(assignment.trial.seed >> 11) * 0x1.0p-53;
      const double duration = options.sleep_min_s + (options.sleep_max_s - options.sleep_min_s) * u;
      const double began = bench::NowSeconds();
      std::this_thread::sleep_for(std::chrono::duration<double>(duration));
      times.busy_s += bench::NowSeconds() - began;
    }
    finished_at = bench::NowSeconds();
    if (layout.rank_in_group == 0) {
      times.finish_s.push_back(finished_at - start);
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
  return times;
}

// Wall time per trial (us) over the first and the last tenth of the trials to finish; zeros
// for fewer than two tenths.
std::pair<double, double> FirstAndLastTenth(std::vector<double> finishes) {
  std::sort(finishes.begin(), finishes.end());
  const size_t tenth = std::max<size_t>(1, finishes.size() / 10);
  if (finishes.size() < 2 * tenth) return {0.0, 0.0};
  const double first_us = finishes[tenth - 1] / static_cast<double>(tenth) * 1e6;
  const double last_us =
      (finishes.back() - finishes[finishes.size() - tenth - 1]) / static_cast<double>(tenth) * 1e6;
  return {first_us, last_us};
}

// Rank 0: the result line of the run (slot utilization with a sleep range, dispatch overhead
// without).
void PrintRun(const Options& options, const Communicator& world, const GroupLayout& layout,
              double elapsed, double total_busy_s, const std::vector<double>& gaps_ms,
              const std::vector<double>& finishes, bool check) {
  const bench::Summary gap = bench::Summarize(gaps_ms);
  bench::Fields fields = {{"ranks", std::to_string(world.size())},
                          {"groups", std::to_string(layout.num_groups)},
                          {"trials", std::to_string(options.trials)}};
  if (options.sleep_max_s > 0.0) {
    const double dispatch_share = gap.mean * 1e-3 * static_cast<double>(gap.count) *
                                  options.ranks_per_trial / (world.size() * elapsed);
    fields.insert(
        fields.end(),
        {{"sleep_s", bench::Number(options.sleep_min_s) + "-" + bench::Number(options.sleep_max_s)},
         {"wall_s", bench::Number(elapsed)},
         {"utilization", bench::Number(total_busy_s / (world.size() * elapsed))},
         {"dispatch_share", bench::Number(dispatch_share)},
         {"gap_ms_mean", bench::Number(gap.mean)},
         {"gap_ms_p99", bench::Number(gap.p99)}});
    bench::PrintResult("slot_utilization", fields, check);
    return;
  }
  const auto [first_us, last_us] = FirstAndLastTenth(finishes);
  fields.insert(fields.end(),
                {{"trials_per_s", bench::Number(options.trials / elapsed)},
                 {"us_per_trial", bench::Number(elapsed / options.trials * 1e6)},
                 {"us_per_trial_first10", bench::Number(first_us)},
                 {"us_per_trial_last10", bench::Number(last_us)},
                 {"last_over_first", bench::Number(first_us > 0 ? last_us / first_us : 0)},
                 {"gap_ms_mean", bench::Number(gap.mean)},
                 {"gap_ms_p50", bench::Number(gap.p50)},
                 {"gap_ms_p99", bench::Number(gap.p99)}});
  bench::PrintResult("dispatch_overhead", fields, check);
}

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<MpiSession> session;
  if (!MpiSession::Start(&argc, &argv, &session).ok()) return 1;
  Options options;
  if (argc > 1) options.trials = std::stoll(argv[1]);
  if (argc > 2) options.ranks_per_trial = std::stoi(argv[2]);
  if (argc > 4) options.sleep_min_s = std::stod(argv[3]);
  if (argc > 4) options.sleep_max_s = std::stod(argv[4]);

  const Communicator world = Communicator::World();
  const SweepConfig config = bench::ParseBenchConfig(kConfig, "dispatch_overhead.yaml",
                                                     {{"RUN_CAP", std::to_string(options.trials)}});
  const GroupLayout layout = bench::BenchLayout(world, options.ranks_per_trial);
  const std::filesystem::path folder = bench::BenchFolder("dispatch");
  SweepSession sweep(world, layout);
  if (world.rank() == 0) bench::CoordinateOnRoot(config, folder, &sweep);
  sweep.Start();

  MPI_Barrier(world.get());
  const double start = bench::NowSeconds();
  const RankTimes times = RunTrials(options, config, layout, &sweep, start);
  MPI_Barrier(world.get());
  const double elapsed = bench::NowSeconds() - start;
  double total_busy_s = 0.0;
  MPI_Reduce(&times.busy_s, &total_busy_s, 1, MPI_DOUBLE, MPI_SUM, 0, world.get());
  const std::vector<double> gaps_ms = bench::GatherOnRoot(world, times.gaps_ms);
  const std::vector<double> finishes = bench::GatherOnRoot(world, times.finish_s);
  sweep.Join();
  if (world.rank() != 0) return 0;
  const Status closed = sweep.study().Close();
  StudyContents contents;
  const Status read = ReadStudy((folder / "study.h5").string(), &contents);
  const bool check =
      closed.ok() && read.ok() && static_cast<int64_t>(contents.trials.size()) == options.trials;
  PrintRun(options, world, layout, elapsed, total_busy_s, gaps_ms, finishes, check);
  std::filesystem::remove_all(folder);
  return check ? 0 : 1;
}
