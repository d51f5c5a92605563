// Allreduce bus bandwidth of hpo's GPU data plane against raw NCCL, nccl-tests style, for messages
// of 1 KiB .. --max-mb MiB (x4 steps) summed over every rank of the world, one GPU per rank (the
// CUDA build; run under mpirun -np N on a node with N GPUs):
//   mpirun -np N hpo_bench_nccl_busbw [--max-mb M] [--bucket-mb B]
// Three ways to sum the same float32 bytes on the device, each timed over `iters` back-to-back runs
// after one warm-up, the host waiting for the last:
//   raw:       ncclAllReduce in place on one device buffer, on a stream of its own;
//   hpo:       NcclGroupCollectives::StartAllreduceSum + Wait on the same buffer (what a gradient
//              bucket does: an event orders it after the compute stream, Wait syncs its event);
//   gradient:  GradientBuckets::AllreduceGradients over the bytes cut into parameters of at most
//              4 MiB on the device, in buckets of B MiB (default 25): copy in, allreduce, copy
//              back.
// time = the slowest rank's mean time per run; algbw = bytes / time; busbw = algbw x 2(n-1)/n (0 on
// one GPU, where NCCL only copies: the *_vs_raw ratios still compare the paths' overheads).
// Check: the raw and hpo buffers start at 1 and are summed in place, so every element must be
// n^runs exactly (n a power of two); the gradients start at 1 with grad_scale 1/n, so each must
// still be exactly 1.
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "gpu/cuda_device.hpp"
#include "gpu/nccl_collectives.hpp"
#include "harness.hpp"
#include "hpo/mpi/communicator.hpp"
#include "mpi_harness.hpp"
#include "train/gradient_buckets.hpp"

namespace {

using namespace hpo;

constexpr int64_t kMaxParameterFloats = int64_t{1} << 20;  // 4 MiB parameters

bool AllEqual(const torch::Tensor& tensor, float expected) {
  return torch::all(tensor == expected).item<bool>();
}

void SyncDevice() { cudaDeviceSynchronize(); }

// One message size's mean seconds per run of each way (see the file comment), and whether every
// rank's results were exact.
struct SizeTimes {
  int iters = 0;
  double raw_s = 0.0, hpo_s = 0.0, gradient_s = 0.0;
  bool ok = true;
};

// The device, the raw NCCL communicator and its stream, and hpo's collectives, for every size.
struct Plane {
  MPI_Comm comm;
  int n;
  torch::TensorOptions floats;
  NcclGroupCollectives* collectives;
  NcclCommunicator* raw_comm;
  c10::cuda::CUDAStream* raw_stream;
};

// Times raw ncclAllReduce and hpo's collectives on one device buffer of COUNT floats.
void TimeFlatBuffer(const Plane& plane, int64_t count, SizeTimes* times) {
  float expected = 1.0f;
  for (int i = 0; i < times->iters + 1; ++i) expected *= static_cast<float>(plane.n);
  torch::Tensor buffer = torch::ones({count}, plane.floats);
  const auto raw_once = [&] {
    ncclAllReduce(buffer.data_ptr<float>(), buffer.data_ptr<float>(), count, ncclFloat32, ncclSum,
                  plane.raw_comm->get(), plane.raw_stream->stream());
  };
  SyncDevice();  // the raw stream does not wait for the fill on the current stream
  raw_once();
  times->raw_s = bench::SlowestMeanSeconds(plane.comm, times->iters, raw_once, SyncDevice);
  times->ok = times->ok && AllEqual(buffer, expected);

  buffer.fill_(1.0f);
  const auto hpo_once = [&] {
    plane.collectives->Wait(plane.collectives->StartAllreduceSum(buffer.data_ptr<float>(), count));
  };
  hpo_once();
  times->hpo_s = bench::SlowestMeanSeconds(plane.comm, times->iters, hpo_once, SyncDevice);
  times->ok = times->ok && AllEqual(buffer, expected);
}

// Times GradientBuckets over COUNT floats of device gradients in parameters of at most
// kMaxParameterFloats, in buckets of BUCKET_MB.
void TimeGradients(const Plane& plane, int64_t count, double bucket_mb, SizeTimes* times) {
  std::vector<torch::Tensor> parameters;
  for (int64_t done = 0; done < count; done += kMaxParameterFloats) {
    const int64_t length = std::min(kMaxParameterFloats, count - done);
    parameters.push_back(torch::zeros({length}, plane.floats));
    parameters.back().mutable_grad() = torch::ones({length}, plane.floats);
  }
  const float scale = 1.0f / static_cast<float>(plane.n);
  GradientBuckets buckets(parameters, static_cast<size_t>(bucket_mb * (1 << 20)));
  const auto gradient_once = [&] {
    buckets.AllreduceGradients(*plane.collectives, scale, nullptr);
  };
  gradient_once();
  times->gradient_s =
      bench::SlowestMeanSeconds(plane.comm, times->iters, gradient_once, SyncDevice);
  for (const torch::Tensor& parameter : parameters) {
    times->ok = times->ok && AllEqual(parameter.grad(), 1.0f);
  }
}

void PrintSize(int n, size_t bytes, const SizeTimes& times) {
  const double bus_factor = 2.0 * (n - 1) / n;
  const auto algbw = [&](double seconds) { return static_cast<double>(bytes) / seconds / 1e9; };
  bench::PrintResult("nccl_busbw",
                     {{"ranks", std::to_string(n)},
                      {"bytes", std::to_string(bytes)},
                      {"iters", std::to_string(times.iters)},
                      {"raw_us", bench::Number(times.raw_s * 1e6)},
                      {"hpo_us", bench::Number(times.hpo_s * 1e6)},
                      {"gradient_us", bench::Number(times.gradient_s * 1e6)},
                      {"raw_algbw_GBps", bench::Number(algbw(times.raw_s))},
                      {"raw_busbw_GBps", bench::Number(algbw(times.raw_s) * bus_factor)},
                      {"hpo_busbw_GBps", bench::Number(algbw(times.hpo_s) * bus_factor)},
                      {"gradient_busbw_GBps", bench::Number(algbw(times.gradient_s) * bus_factor)},
                      {"hpo_vs_raw", bench::Number(times.raw_s / times.hpo_s, 3)},
                      {"gradient_vs_raw", bench::Number(times.raw_s / times.gradient_s, 3)}},
                     times.ok);
}

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<MpiSession> session;
  if (!MpiSession::Start(&argc, &argv, &session).ok()) return 1;
  const Communicator world = Communicator::World();
  const int n = world.size();
  double max_mb = 256.0;
  double bucket_mb = 25.0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i];
    if (name == "--max-mb") max_mb = std::atof(argv[i + 1]);
    if (name == "--bucket-mb") bucket_mb = std::atof(argv[i + 1]);
  }
  const Communicator node = world.SplitShared();
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
  if ((n & (n - 1)) != 0 || max_mb <= 0.0 || bucket_mb <= 0.0 || gpus < node.size()) {
    if (world.rank() == 0) {
      std::fprintf(stderr,
                   "usage: mpirun -np 2^k hpo_bench_nccl_busbw [--max-mb M] [--bucket-mb B], one "
                   "GPU per rank (%d visible, %d ranks on this node)\n",
                   gpus, node.size());
    }
    return 2;
  }
  if (!ActivateCudaDevice(node.rank(), 1).ok()) return 1;
  const torch::Device device(torch::kCUDA, node.rank());
  NcclGroupCollectives collectives(world);
  NcclCommunicator raw_comm = NcclCommunicator::Create(world);
  c10::cuda::CUDAStream raw_stream = c10::cuda::getStreamFromPool(false, node.rank());
  const Plane plane{
      world.get(),  n,         torch::TensorOptions().dtype(torch::kFloat32).device(device),
      &collectives, &raw_comm, &raw_stream};
  bool all_ok = true;
  for (size_t bytes = 1024; static_cast<double>(bytes) <= max_mb * (1 << 20); bytes *= 4) {
    const auto count = static_cast<int64_t>(bytes / sizeof(float));
    SizeTimes times;
    times.iters = static_cast<int>(std::clamp<size_t>((size_t{1} << 30) / bytes, 5, 200));
    TimeFlatBuffer(plane, count, &times);
    TimeGradients(plane, count, bucket_mb, &times);
    times.ok = bench::OnEveryRank(plane.comm, times.ok);
    all_ok = all_ok && times.ok;
    if (world.rank() == 0) PrintSize(n, bytes, times);
  }
  return all_ok ? 0 : 1;
}
