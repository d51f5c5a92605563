// What the liveness heartbeat (mpi/peer_watch.hpp) costs. Run under mpirun:
//   mpirun --oversubscribe -np 64 hpo_bench_heartbeat [SECONDS] [TIMEOUT_S]
// Every rank sleeps for SECONDS (default 20) twice: once with a PeerWatch of TIMEOUT_S (default
// 60, hpo's default peer_timeout_s) running, once without; the order alternates with the rank
// count's parity so neither phase always runs first. Rank 0 prints the messages per second its
// watch thread exchanges (by design 2 (ranks - 1) per heartbeat period) and the CPU time per
// second of rank 0 and of all ranks together in each phase, from getrusage.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "harness.hpp"
#include "hpo/mpi/communicator.hpp"
#include "mpi/peer_watch.hpp"

namespace {

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

// CPU seconds per wall second of this rank while it sleeps `seconds`, with or without a watch.
double Phase(const hpo::Communicator& world, bool watched, double seconds, double timeout_s) {
  std::unique_ptr<hpo::PeerWatch> watch;
  if (watched) {
    watch = std::make_unique<hpo::PeerWatch>(world, timeout_s, [](const hpo::LostPeers& lost) {
      std::fprintf(stderr, "unexpected loss: %s\n", lost.Describe().c_str());
    });
  }
  MPI_Barrier(world.get());
  const double cpu = CpuSeconds();
  const double start = hpo::bench::NowSeconds();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const double used = (CpuSeconds() - cpu) / (hpo::bench::NowSeconds() - start);
  watch.reset();
  MPI_Barrier(world.get());
  return used;
}

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<hpo::MpiSession> session;
  if (!hpo::MpiSession::Start(&argc, &argv, &session).ok()) return 1;
  const double seconds = argc > 1 ? std::stod(argv[1]) : 20.0;
  const double timeout_s = argc > 2 ? std::stod(argv[2]) : 60.0;
  const hpo::Communicator world = hpo::Communicator::World();
  const bool watch_first = world.size() % 2 == 0;
  double with_watch = 0.0;
  double without = 0.0;
  if (watch_first) {
    with_watch = Phase(world, true, seconds, timeout_s);
    without = Phase(world, false, seconds, timeout_s);
  } else {
    without = Phase(world, false, seconds, timeout_s);
    with_watch = Phase(world, true, seconds, timeout_s);
  }
  double totals[2] = {0.0, 0.0};
  const double mine[2] = {with_watch, without};
  MPI_Reduce(mine, totals, 2, MPI_DOUBLE, MPI_SUM, 0, world.get());
  if (world.rank() == 0) {
    const double period = std::min(timeout_s / 5.0, 1.0);
    std::printf(
        "bench=heartbeat ranks=%d timeout_s=%.0f period_s=%.2f rank0_messages_per_s=%.0f "
        "rank0_cpu_ms_per_s_watch=%.2f rank0_cpu_ms_per_s_none=%.2f "
        "all_ranks_cpu_ms_per_s_watch=%.1f all_ranks_cpu_ms_per_s_none=%.1f check=ok\n",
        world.size(), timeout_s, period, 2.0 * (world.size() - 1) / period, 1e3 * with_watch,
        1e3 * without, 1e3 * totals[0], 1e3 * totals[1]);
  }
  return 0;
}
