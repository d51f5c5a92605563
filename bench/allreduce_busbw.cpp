// Allreduce bus bandwidth of the gradient path against raw MPI, nccl-tests style, for messages of
// 1 KiB .. 256 MiB (x4 steps) summed over every rank of the world. Run under mpirun on a power of
// two >= 2 ranks (so that every check below is exact in float):
//   mpirun -np N hpo_bench_busbw [--max-mb M] [--bucket-mb B]
// Three ways to sum the same bytes, each timed over `iters` back-to-back runs after one warm-up:
//   raw:       MPI_Allreduce(MPI_IN_PLACE) on one float buffer;
//   async:     MpiGroupCollectives::StartAllreduceSum + Wait (MPI_Iallreduce) on the same buffer;
//   gradient:  GradientBuckets::AllreduceGradients over the bytes cut into parameters of at most
//              4 MiB, in buckets of B MiB (default 25): copy into buckets, allreduce, copy back;
//   bf16:      the same with `compression: bf16`: buckets rounded to bfloat16, summed with the
//              user-defined MPI reduction (MPI_Iallreduce + Wait), widened back; its busbw counts
//              the float32 gradient bytes delivered, so it shows what the halved wire bytes buy.
// time = the slowest rank's mean time per run; algbw = bytes / time; busbw = algbw x 2(n-1)/n.
// Check: every run's result is verified after the timed runs: the raw and async buffers start at
// 1.0 and are summed in place, so each element must be n^runs exactly; the gradients start at 1.0
// with grad_scale 1/n, so each must still be exactly 1.0 (1/n and 1 are exact in bfloat16 too).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "harness.hpp"
#include "hpo/mpi/communicator.hpp"
#include "mpi/mpi_collectives.hpp"
#include "mpi_harness.hpp"
#include "train/gradient_buckets.hpp"

namespace {

using namespace hpo;

constexpr size_t kMaxParameterFloats = size_t{1} << 20;  // 4 MiB parameters

bool AllEqual(const float* data, size_t count, float expected) {
  return std::all_of(data, data + count, [expected](float v) { return v == expected; });
}

// One message size's mean seconds per run of each way (see the file comment), and whether every
// rank's results were exact.
struct SizeTimes {
  int iters = 0;
  size_t buckets = 0;
  double raw_s = 0.0, async_s = 0.0, gradient_s = 0.0, bf16_s = 0.0;
  bool ok = true;
};

// Times raw MPI_Allreduce and the async path on one buffer of COUNT floats.
void TimeFlatBuffer(MPI_Comm comm, int n, MpiGroupCollectives& collectives, size_t count,
                    SizeTimes* times) {
  std::vector<float> buffer(count, 1.0f);
  MPI_Allreduce(MPI_IN_PLACE, buffer.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, comm);
  times->raw_s = bench::SlowestMeanSeconds(comm, times->iters, [&] {
    MPI_Allreduce(MPI_IN_PLACE, buffer.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, comm);
  });
  float expected = 1.0f;
  for (int i = 0; i < times->iters + 1; ++i) expected *= static_cast<float>(n);
  times->ok = times->ok && AllEqual(buffer.data(), count, expected);

  std::fill(buffer.begin(), buffer.end(), 1.0f);
  collectives.Wait(collectives.StartAllreduceSum(buffer.data(), count));
  times->async_s = bench::SlowestMeanSeconds(comm, times->iters, [&] {
    collectives.Wait(collectives.StartAllreduceSum(buffer.data(), count));
  });
  times->ok = times->ok && AllEqual(buffer.data(), count, expected);
}

// Times the gradient path, float32 and bf16, over COUNT floats of gradients in parameters of at
// most kMaxParameterFloats, in buckets of BUCKET_MB.
void TimeGradients(MPI_Comm comm, int n, MpiGroupCollectives& collectives, size_t count,
                   double bucket_mb, SizeTimes* times) {
  std::vector<torch::Tensor> parameters;
  for (size_t done = 0; done < count; done += kMaxParameterFloats) {
    const auto length = static_cast<int64_t>(std::min(kMaxParameterFloats, count - done));
    parameters.push_back(torch::zeros({length}));
    parameters.back().mutable_grad() = torch::ones({length});
  }
  const auto gradients_are_one = [&] {
    for (const torch::Tensor& p : parameters) {
      times->ok =
          times->ok && AllEqual(p.grad().data_ptr<float>(), static_cast<size_t>(p.numel()), 1.0f);
    }
  };
  const float scale = 1.0f / static_cast<float>(n);
  const auto bucket_bytes = static_cast<size_t>(bucket_mb * (1 << 20));
  GradientBuckets buckets(parameters, bucket_bytes);
  times->buckets = buckets.num_buckets();
  buckets.AllreduceGradients(collectives, scale, nullptr);
  times->gradient_s = bench::SlowestMeanSeconds(
      comm, times->iters, [&] { buckets.AllreduceGradients(collectives, scale, nullptr); });
  gradients_are_one();
  GradientBuckets compressed(parameters, bucket_bytes, 0, 0, ReducedFloat::kBFloat16);
  compressed.AllreduceGradients(collectives, scale, nullptr);
  times->bf16_s = bench::SlowestMeanSeconds(
      comm, times->iters, [&] { compressed.AllreduceGradients(collectives, scale, nullptr); });
  gradients_are_one();
}

void PrintSize(int n, size_t bytes, const SizeTimes& times) {
  const double bus_factor = 2.0 * (n - 1) / n;
  const auto busbw = [&](double seconds) {
    return bench::Number(static_cast<double>(bytes) / seconds / 1e9 * bus_factor);
  };
  bench::PrintResult("allreduce_busbw",
                     {{"ranks", std::to_string(n)},
                      {"bytes", std::to_string(bytes)},
                      {"iters", std::to_string(times.iters)},
                      {"buckets", std::to_string(times.buckets)},
                      {"raw_us", bench::Number(times.raw_s * 1e6)},
                      {"async_us", bench::Number(times.async_s * 1e6)},
                      {"gradient_us", bench::Number(times.gradient_s * 1e6)},
                      {"raw_busbw_GBps", busbw(times.raw_s)},
                      {"async_busbw_GBps", busbw(times.async_s)},
                      {"gradient_busbw_GBps", busbw(times.gradient_s)},
                      {"bf16_us", bench::Number(times.bf16_s * 1e6)},
                      {"bf16_busbw_GBps", busbw(times.bf16_s)},
                      {"gradient_vs_raw", bench::Number(times.raw_s / times.gradient_s, 3)},
                      {"bf16_vs_gradient", bench::Number(times.gradient_s / times.bf16_s, 3)}},
                     times.ok);
}

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<MpiSession> session;
  if (!MpiSession::Start(&argc, &argv, &session).ok()) return 1;
  const Communicator world = Communicator::World();
  const MPI_Comm comm = world.get();
  const int n = world.size();
  double max_mb = 256.0;
  double bucket_mb = 25.0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i];
    if (name == "--max-mb") max_mb = std::atof(argv[i + 1]);
    if (name == "--bucket-mb") bucket_mb = std::atof(argv[i + 1]);
  }
  if (n < 2 || (n & (n - 1)) != 0 || max_mb <= 0.0 || bucket_mb <= 0.0) {
    if (world.rank() == 0) {
      std::fprintf(stderr,
                   "usage: mpirun -np 2^k>=2 hpo_bench_busbw [--max-mb M] [--bucket-mb B]\n");
    }
    return 2;
  }
  MpiGroupCollectives collectives(world);
  bool all_ok = true;
  for (size_t bytes = 1024; static_cast<double>(bytes) <= max_mb * (1 << 20); bytes *= 4) {
    const size_t count = bytes / sizeof(float);
    SizeTimes times;
    times.iters = static_cast<int>(std::clamp<size_t>((size_t{64} << 20) / bytes, 3, 50));
    TimeFlatBuffer(comm, n, collectives, count, &times);
    TimeGradients(comm, n, collectives, count, bucket_mb, &times);
    times.ok = bench::OnEveryRank(comm, times.ok);
    all_ok = all_ok && times.ok;
    if (world.rank() == 0) PrintSize(n, bytes, times);
  }
  return all_ok ? 0 : 1;
}
