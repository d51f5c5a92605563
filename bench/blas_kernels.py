#!/usr/bin/env python3
"""What OpenBLAS's kernels are worth to training here (runtime/blas_kernels.hpp): Debian 12's
OpenBLAS falls back to its generic Prescott (SSE3) kernels on a CPU newer than it, and hpo-torch
then restarts with OPENBLAS_CORETYPE=Haswell (AVX2). Per core type (OpenBLAS's own choice, then
Prescott and Haswell forced), interleaved --repeat times:

* sgemm: single-precision GFLOPS of cblas_sgemm on 256 x 1152 by 1152 x 3136 matrices (the shape
  of the CNN's second convolution as im2col) through libblas.so.3, the library Debian's libtorch
  links, on one thread;
* training: samples/s of hpo_bench_ddp (1 rank x 1 thread, the Fashion-MNIST CNN) on
  --train-samples images.

Usage: bench/blas_kernels.py --build build [--repeat 3] [--train-samples 10000]
Prints `bench=blas_kernels core=... chosen=... sgemm_gflops=... samples_per_s=...` per core type
(medians) and a line of the ratios Haswell / Prescott; check=ok when every run succeeded and
Haswell's sgemm is at least Prescott's (on a CPU with AVX2 and FMA: it is what hpo forces there).
"""

import argparse
import ctypes
import os
import re
import statistics
import subprocess
import sys
import time

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
CORE_TYPES = ("default", "Prescott", "Haswell")

# Run in a process of its own per core type (OpenBLAS reads OPENBLAS_CORETYPE when it loads).
SGEMM = r"""
import ctypes, sys, time
blas = ctypes.CDLL("libblas.so.3")
name = getattr(blas, "openblas_get_corename", None)
if name is None:
    sys.exit("libblas.so.3 is not OpenBLAS")
name.restype = ctypes.c_char_p
m, k, n = 256, 1152, 3136
a = (ctypes.c_float * (m * k))(*([0.5] * (m * k)))
b = (ctypes.c_float * (k * n))(*([0.25] * (k * n)))
c = (ctypes.c_float * (m * n))()
def sgemm():  # CblasRowMajor 101, CblasNoTrans 111
    blas.cblas_sgemm(101, 111, 111, m, n, k, ctypes.c_float(1.0), a, k, b, n, ctypes.c_float(0.0),
                     c, n)
sgemm()
runs, start = 0, time.perf_counter()
while time.perf_counter() - start < 1.5:
    sgemm()
    runs += 1
print(name().decode(), 2.0 * m * k * n * runs / (time.perf_counter() - start) / 1e9)
"""


def environment(core):
    env = dict(os.environ, **MPI_ENV)
    env.pop("OPENBLAS_CORETYPE", None)
    if core != "default":
        env["OPENBLAS_CORETYPE"] = core
    return env


def measure_sgemm(core):
    done = subprocess.run([sys.executable, "-c", SGEMM], capture_output=True, text=True,
                          env=environment(core), check=True)
    chosen, gflops = done.stdout.split()
    return chosen, float(gflops)


def measure_training(build, core, samples):
    done = subprocess.run(["mpirun", "--oversubscribe", "--bind-to", "none", "-np", "1",
                           os.path.join(build, "bench", "hpo_bench_ddp"), "--threads", "1",
                           "--train-samples", str(samples), "--epochs", "1"],
                          capture_output=True, text=True, env=environment(core), check=True)
    found = re.search(r"samples_per_s=([0-9.]+)", done.stdout)
    if not found or "check=ok" not in done.stdout:
        raise RuntimeError("hpo_bench_ddp: " + done.stdout + done.stderr)
    return float(found.group(1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--train-samples", type=int, default=10000)
    args = parser.parse_args()
    chosen, sgemm, training = {}, {core: [] for core in CORE_TYPES}, {core: [] for core in CORE_TYPES}
    for _ in range(args.repeat):
        for core in CORE_TYPES:
            chosen[core], gflops = measure_sgemm(core)
            sgemm[core].append(gflops)
            training[core].append(measure_training(args.build, core, args.train_samples))
    median = {core: (statistics.median(sgemm[core]), statistics.median(training[core]))
              for core in CORE_TYPES}
    for core in CORE_TYPES:
        print("bench=blas_kernels core=%s chosen=%s sgemm_gflops=%.1f samples_per_s=%.0f runs=%d "
              "check=ok" % (core, chosen[core], median[core][0], median[core][1], args.repeat))
    check = median["Haswell"][0] >= median["Prescott"][0]
    print("bench=blas_kernels haswell_over_prescott_sgemm=%.2f haswell_over_prescott_training=%.2f "
          "default_over_prescott_training=%.2f check=%s"
          % (median["Haswell"][0] / median["Prescott"][0],
             median["Haswell"][1] / median["Prescott"][1],
             median["default"][1] / median["Prescott"][1], "ok" if check else "FAILED"))
    return 0 if check else 1


if __name__ == "__main__":
    sys.exit(main())
