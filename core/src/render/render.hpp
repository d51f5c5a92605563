// Job files for the platforms a sweep runs on, generated from its config (`hpo render`): a Kubeflow
// MPIJob (kubeflow.org/v2beta1, with the ConfigMap that carries the config) and a Slurm batch
// script. Pure functions of the parsed config and the options: they return text and write nothing.
// Every choice the platform would reject (a rank count that does not fit ranks_per_trial, a name
// that is not a DNS-1035 label, a malformed time limit, ...) is a BadInput naming the option, so
// the caller writes no file unless rendering succeeded. Knows neither MPI nor torch; thread-safe.
//
// Ranks per node (an MPIJob worker's slots, a Slurm node's tasks), for G > 0 GPUs per node and the
// config's trials_per_gpu K (AssignGpu in common/gpu_assignment.hpp maps ranks to GPUs at start):
//   K == 1: one rank per GPU by default (G); a given count must be a multiple of G.
//   K > 1:  node-local ranks K*g .. K*g+K-1 share GPU g; G*K ranks by default; a given count must
//           be at most G*K (more would need more GPUs than the node has) and a multiple of K, so
//           every GPU in use runs exactly K trials (fewer than G*K leave GPUs idle).
// Without GPUs the default is ranks_per_trial.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/status.hpp"

namespace hpo {

// Per-node hardware of the EC2 instance types the GPU examples target.
struct InstanceType {
  std::string name;         // e.g. "p4d.24xlarge"
  int64_t gpus = 0;         // NVIDIA GPUs per node
  int64_t efa_devices = 0;  // EFA interfaces per node (vpc.amazonaws.com/efa)
  bool efa_rdma = false;    // EFA with RDMA reads/writes (FI_EFA_USE_DEVICE_RDMA=1)
  int64_t vcpus = 0;
  int64_t memory_gib = 0;
};

// The instance types `--instance-type` knows; FindInstanceType returns null for any other.
const std::vector<InstanceType>& KnownInstanceTypes();
const InstanceType* FindInstanceType(const std::string& name);

// Options of `hpo render mpijob`. Defaults give a CPU job of one worker.
struct MpiJobOptions {
  std::string name;            // DNS-1035 label; empty: "hpo-" + the sweep's name or file stem
  std::string namespace_name;  // empty: no namespace in the manifest (kubectl's current one)
  int64_t workers = 1;         // worker pods (one per node for GPU instances)
  // Ranks per worker pod; 0: GPUs x trials_per_gpu, or ranks_per_trial on CPU workers.
  int64_t slots_per_worker = 0;
  int64_t gpus_per_worker = -1;  // nvidia.com/gpu per worker; -1: the instance type's, else 0
  int64_t efa_per_worker = -1;  // vpc.amazonaws.com/efa per worker; -1: the instance type's, else 0
  std::string instance_type;    // node selector, and the defaults of the two lines above
  // Unset: the image scripts/build-image.sh builds for the job, hpo-mpi:cuda when the workers have
  // GPUs, else hpo-mpi:cpu.
  std::optional<std::string> image;
  std::string claim = "hpo-study";  // ReadWriteMany PersistentVolumeClaim mounted at /study
  std::string worker_memory;        // Kubernetes quantity; empty: 1Gi per slot on CPU workers
  int64_t restarts = 6;             // runPolicy.backoffLimit: launcher restarts (each resumes)
  std::string command_line;         // the render command, recorded in the header comment
};

// The ConfigMap and the MPIJob, as one multi-document YAML text. The launcher runs
// `hpo-mpirun --hostfile /etc/mpi/hostfile -np N ... hpo sweep --config /etc/hpo/sweep.yaml
// --output /study/NAME --resume`, so a restarted launcher resumes the study.
Status RenderMpiJob(const SweepConfig& config, const MpiJobOptions& options, std::string* yaml);

// Options of `hpo render sbatch`.
struct SbatchOptions {
  std::string job_name;     // empty: "hpo-" + the sweep's name or file stem
  std::string config_path;  // the default config the script runs (as given: relative paths
                            // are resolved against the submit folder when the job starts)
  std::string output_dir;   // the default output folder; empty: the config's `output`
  int64_t nodes = 1;
  // Ranks per node; 0: gpus_per_node x trials_per_gpu, or ranks_per_trial without GPUs.
  int64_t ntasks_per_node = 0;
  int64_t gpus_per_node = 0;
  int64_t cpus_per_task = 0;  // 0: the config's threads_per_rank
  std::string time = "01:00:00";
  std::string partition;
  std::string account;
  bool exclusive = false;
  bool preemptible = false;         // --requeue, --signal=B:USR1@signal_lead_s, --open-mode=append
  int64_t signal_lead_s = 120;      // seconds before the time limit the USR1 arrives
  std::string array;                // --array spec (one study per array task); empty: no array
  std::string launcher = "mpirun";  // or "srun" (srun --mpi=pmix)
  std::string command_line;         // the render command, recorded in the header comment
};

// A complete batch script: #SBATCH lines from the options, then the shared job body (argument
// handling, launch, signal forwarding and requeue; core/src/render/templates/sbatch_body.sh).
Status RenderSbatch(const SweepConfig& config, const SbatchOptions& options, std::string* script);

// Whether `name` is a DNS-1035 label (lower-case letters, digits and '-', starting with a letter,
// ending with a letter or digit, at most 63 characters), as Kubernetes requires of an MPIJob name.
bool IsDns1035Label(const std::string& name);

}  // namespace hpo
