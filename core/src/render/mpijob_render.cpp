// RenderMpiJob: a ConfigMap holding the sweep config and a kubeflow.org/v2beta1 MPIJob whose
// launcher runs the sweep with mpirun over the operator's hostfile. Emitted with yaml-cpp, so every
// string is quoted as YAML needs; the field order follows the operator's examples.
#include <yaml-cpp/yaml.h>

#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "render/render.hpp"
#include "render_names.hpp"

namespace hpo {
namespace {

using render_internal::CheckPositive;
using render_internal::CheckRankCount;
using render_internal::DefaultJobName;
using render_internal::ResolveRanksPerNode;

constexpr const char* kConfigMountPath = "/etc/hpo";
constexpr const char* kConfigKey = "sweep.yaml";
constexpr const char* kStudyMountPath = "/study";
// Memory-backed /dev/shm: Docker's default 64 MiB is too small for NCCL's shared-memory transport
// and for Open MPI's vader between ranks of one pod.
constexpr const char* kGpuShmSize = "64Gi";
constexpr const char* kCpuShmSize = "1Gi";
// EFA needs huge pages for its bounce buffers (AWS EKS EFA guide: 5120Mi of 2 MiB pages per pod).
constexpr const char* kEfaHugepages = "5120Mi";

// The worker and launcher resources and placement, resolved from the options and the instance.
struct Resolved {
  std::string name;
  int64_t workers = 1;
  int64_t slots = 1;
  int64_t gpus = 0;
  int64_t efa = 0;
  bool efa_rdma = false;
  int64_t ranks = 1;
  std::string worker_memory;
  std::string worker_cpu;
  std::string image;
};

// The job's name (--name or the sweep's) and --workers, checked as the pods' names.
Status ResolveJobName(const SweepConfig& config, const MpiJobOptions& options, Resolved* r) {
  r->name = options.name.empty() ? DefaultJobName(config) : options.name;
  if (!IsDns1035Label(r->name)) {
    return Status::BadInput(
        (options.name.empty() ? "the job name '" + r->name + "' derived from " + config.path
                              : "--name '" + r->name + "'") +
        " is not a DNS-1035 label (lower-case letters, digits and '-', starting with a letter, "
        "at most 63 characters); give --name");
  }
  HPO_RETURN_IF_ERROR(CheckPositive("--workers", options.workers));
  r->workers = options.workers;
  // Pod hostnames are NAME-worker-I; each must be a DNS label too (the operator checks the last).
  const std::string last_worker = r->name + "-worker-" + std::to_string(r->workers - 1);
  if (last_worker.size() > 63) {
    return Status::BadInput("--name '" + r->name + "' is too long: the worker pod name '" +
                            last_worker + "' has more than 63 characters");
  }
  return Status::Ok();
}

// A worker's GPUs and EFA interfaces: the options', else the instance type's, else none.
Status ResolveWorkerDevices(const MpiJobOptions& options, Resolved* r) {
  const InstanceType* instance = nullptr;
  if (!options.instance_type.empty()) {
    instance = FindInstanceType(options.instance_type);
    if (instance == nullptr && (options.gpus_per_worker < 0 || options.efa_per_worker < 0)) {
      std::string known;
      for (const InstanceType& type : KnownInstanceTypes()) {
        known += (known.empty() ? "" : ", ") + type.name;
      }
      return Status::BadInput("--instance-type '" + options.instance_type + "' is not one of " +
                              known + "; give --gpus-per-worker and --efa-per-worker for it");
    }
  }
  r->gpus = options.gpus_per_worker >= 0 ? options.gpus_per_worker
                                         : (instance != nullptr ? instance->gpus : 0);
  r->efa = options.efa_per_worker >= 0 ? options.efa_per_worker
                                       : (instance != nullptr ? instance->efa_devices : 0);
  r->efa_rdma = r->efa > 0 && instance != nullptr && instance->efa_rdma;
  if (instance != nullptr && r->gpus > instance->gpus) {
    return Status::BadInput("--gpus-per-worker " + std::to_string(r->gpus) + ": " + instance->name +
                            " has " + std::to_string(instance->gpus) + " GPUs");
  }
  if (instance != nullptr && r->efa > instance->efa_devices) {
    return Status::BadInput("--efa-per-worker " + std::to_string(r->efa) + ": " + instance->name +
                            " has " + std::to_string(instance->efa_devices) + " EFA interfaces");
  }
  return Status::Ok();
}

// --image, --claim, --namespace and --restarts, as Kubernetes takes them.
Status CheckClusterOptions(const MpiJobOptions& options) {
  if (options.image && options.image->empty()) {
    return Status::BadInput("--image must not be empty");
  }
  if (!render_internal::IsDns1123Name(options.claim, 253)) {
    return Status::BadInput("--claim '" + options.claim +
                            "' is not a PersistentVolumeClaim name (DNS-1123 subdomain)");
  }
  if (!options.namespace_name.empty() &&
      !render_internal::IsDns1123Name(options.namespace_name, 63)) {
    return Status::BadInput("--namespace '" + options.namespace_name +
                            "' is not a namespace name (DNS-1123 label)");
  }
  if (options.restarts < 0) {
    return Status::BadInput("--restarts must be 0 or more, not " +
                            std::to_string(options.restarts));
  }
  return Status::Ok();
}

Status Resolve(const SweepConfig& config, const MpiJobOptions& options, Resolved* out) {
  if (!config.command.program_as_written.empty() && config.command.program_as_written[0] != '/') {
    return Status::BadInput(
        config.path + ": sweep.program '" + config.command.program_as_written +
        "' is relative, but the MPIJob mounts the config at " + kConfigMountPath +
        ", where the program is not: give its absolute path in the container image or on the "
        "shared volume (e.g. /data/train.py)");
  }
  Resolved r;
  HPO_RETURN_IF_ERROR(ResolveJobName(config, options, &r));
  HPO_RETURN_IF_ERROR(ResolveWorkerDevices(options, &r));
  r.image = options.image.value_or(r.gpus > 0 ? "hpo-mpi:cuda" : "hpo-mpi:cpu");
  if (options.slots_per_worker < 0) {
    return Status::BadInput("--slots-per-worker must be at least 1, not " +
                            std::to_string(options.slots_per_worker));
  }
  HPO_RETURN_IF_ERROR(ResolveRanksPerNode(config, options.slots_per_worker, r.gpus,
                                          {"--slots-per-worker", "--gpus-per-worker", "worker"},
                                          &r.slots));
  r.ranks = r.workers * r.slots;
  HPO_RETURN_IF_ERROR(CheckRankCount(config, r.ranks,
                                     "--workers " + std::to_string(r.workers) + " x " +
                                         std::to_string(r.slots) + " slots per worker"));
  HPO_RETURN_IF_ERROR(CheckClusterOptions(options));
  r.worker_cpu = std::to_string(r.slots * config.execution.threads_per_rank);
  r.worker_memory = options.worker_memory;
  if (r.worker_memory.empty() && r.gpus == 0) r.worker_memory = std::to_string(r.slots) + "Gi";
  *out = std::move(r);
  return Status::Ok();
}

// Emits `text` so that parsing the YAML gives it back exactly: a literal block where YAML's
// clipping keeps it intact, a double-quoted string otherwise.
void EmitExactText(YAML::Emitter& out, const std::string& text) {
  const bool literal_safe =
      !text.empty() && text.back() == '\n' && (text.size() < 2 || text[text.size() - 2] != '\n') &&
      text.front() != ' ' && text.front() != '\n' && text.find('\r') == std::string::npos &&
      text.find('\t') == std::string::npos;
  if (literal_safe) {
    out << YAML::Literal << text;
  } else {
    out << YAML::DoubleQuoted << text;
  }
}

// Emits a string scalar, double-quoted when a YAML 1.1 reader (Kubernetes') would take the plain
// form for a number, boolean or null: `command` must stay a list of strings ("-np", "16").
void EmitString(YAML::Emitter& out, const std::string& value) {
  static const std::regex kNotAString(
      R"(^([-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?|0[xXoObB][0-9a-fA-F_]+|)"
      R"([-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)|[yYnN~]|yes|Yes|YES|no|No|NO|true|True|TRUE|false|)"
      R"(False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL|)$)");
  if (std::regex_match(value, kNotAString)) {
    out << YAML::DoubleQuoted << value;
  } else {
    out << value;
  }
}

// A string for `out <<` through EmitString.
struct Text {
  const std::string& value;
};
YAML::Emitter& operator<<(YAML::Emitter& out, const Text& text) {
  EmitString(out, text.value);
  return out;
}

void EmitEnv(YAML::Emitter& out, const std::vector<std::pair<std::string, std::string>>& env) {
  out << YAML::Key << "env" << YAML::Value << YAML::BeginSeq;
  for (const auto& [name, value] : env) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << name << YAML::Key << "value"
        << YAML::Value << YAML::DoubleQuoted << value << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void EmitQuantities(YAML::Emitter& out, const char* key,
                    const std::vector<std::pair<std::string, std::string>>& quantities) {
  out << YAML::Key << key << YAML::Value << YAML::BeginMap;
  for (const auto& [name, value] : quantities) {
    out << YAML::Key << name << YAML::Value << YAML::DoubleQuoted << value;
  }
  out << YAML::EndMap;
}

// metadata: the object's name, its namespace when one is given, and the app label of the job.
void EmitMetadata(YAML::Emitter& out, const std::string& name, const Resolved& r,
                  const MpiJobOptions& options) {
  out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << Text{name};
  if (!options.namespace_name.empty()) {
    out << YAML::Key << "namespace" << YAML::Value << Text{options.namespace_name};
  }
  out << YAML::Key << "labels" << YAML::Value << YAML::BeginMap << YAML::Key << "app" << YAML::Value
      << Text{r.name} << YAML::EndMap;
  out << YAML::EndMap;
}

std::string RenderConfigMap(const SweepConfig& config, const Resolved& r,
                            const MpiJobOptions& options) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << "v1";
  out << YAML::Key << "kind" << YAML::Value << "ConfigMap";
  EmitMetadata(out, r.name + "-sweep", r, options);
  out << YAML::Key << "data" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << kConfigKey << YAML::Value;
  EmitExactText(out, config.text);
  out << YAML::EndMap;
  out << YAML::EndMap;
  return out.c_str();
}

// The launcher's command: mpirun (through hpo-mpirun, which turns the pod's SIGTERM into the
// USR1 that makes the ranks checkpoint) over the hostfile the operator mounts.
std::vector<std::string> LauncherCommand(const Resolved& r) {
  std::vector<std::string> command = {
      "hpo-mpirun",      "--hostfile", "/etc/mpi/hostfile", "-np",  std::to_string(r.ranks),
      "--bind-to",       "none",       "--map-by",          "slot", "-x",
      "OMP_NUM_THREADS", "-x",         "OMP_WAIT_POLICY"};
  if (r.gpus > 0) {
    for (const char* name : {"PATH", "LD_LIBRARY_PATH", "NCCL_DEBUG"}) {
      command.insert(command.end(), {"-x", name});
    }
  }
  if (r.efa > 0) {
    for (const char* name : {"FI_PROVIDER", "RDMAV_FORK_SAFE"}) {
      command.insert(command.end(), {"-x", name});
    }
    if (r.efa_rdma) command.insert(command.end(), {"-x", "FI_EFA_USE_DEVICE_RDMA"});
    // MPI's own traffic (the control plane) over TCP; gradients go through NCCL and aws-ofi-nccl
    // on EFA. As in AWS's EKS EFA examples.
    command.insert(command.end(), {"--mca", "pml", "^cm,ucx", "--mca", "btl", "tcp,self", "--mca",
                                   "btl_tcp_if_exclude", "lo,docker0"});
  }
  command.insert(command.end(),
                 {"hpo", "sweep", "--config", std::string(kConfigMountPath) + "/" + kConfigKey,
                  "--output", std::string(kStudyMountPath) + "/" + r.name, "--resume"});
  return command;
}

std::vector<std::pair<std::string, std::string>> LauncherEnv(const SweepConfig& config,
                                                             const Resolved& r) {
  std::vector<std::pair<std::string, std::string>> env = {
      {"OMPI_ALLOW_RUN_AS_ROOT", "1"},
      {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"},
      {"OMP_NUM_THREADS", std::to_string(config.execution.threads_per_rank)},
      {"OMP_WAIT_POLICY", "passive"},
  };
  if (r.gpus > 0) env.emplace_back("NCCL_DEBUG", "INFO");  // logs the network NCCL chose
  if (r.efa > 0) {
    env.emplace_back("FI_PROVIDER", "efa");
    env.emplace_back("RDMAV_FORK_SAFE", "1");
    // GPUDirect RDMA over EFA: p4d and p5 have it, g5's EFA does not.
    if (r.efa_rdma) env.emplace_back("FI_EFA_USE_DEVICE_RDMA", "1");
  }
  return env;
}

// Opens the replica spec `role` of `replicas` pods, restarted on failure, up to its pod spec.
void BeginReplicaPodSpec(YAML::Emitter& out, const char* role, int64_t replicas,
                         const SweepConfig& config, const Resolved& r) {
  out << YAML::Key << role << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "replicas" << YAML::Value << replicas;
  out << YAML::Key << "restartPolicy" << YAML::Value << "OnFailure";
  out << YAML::Key << "template" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "labels"
      << YAML::Value << YAML::BeginMap << YAML::Key << "app" << YAML::Value << Text{r.name}
      << YAML::EndMap << YAML::EndMap;
  out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "terminationGracePeriodSeconds" << YAML::Value
      << (static_cast<int64_t>(config.checkpoint.grace_period_s) + 30);
}

// Closes what BeginReplicaPodSpec opened.
void EndReplicaPodSpec(YAML::Emitter& out) {
  out << YAML::EndMap;  // spec
  out << YAML::EndMap;  // template
  out << YAML::EndMap;  // the role
}

// Launcher: runs mpirun only; restarted on failure, and each start resumes the study.
void EmitLauncher(YAML::Emitter& out, const SweepConfig& config, const Resolved& r) {
  BeginReplicaPodSpec(out, "Launcher", 1, config, r);
  out << YAML::Key << "containers" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << "launcher";
  out << YAML::Key << "image" << YAML::Value << Text{r.image};
  out << YAML::Key << "command" << YAML::Value << YAML::BeginSeq;
  for (const std::string& word : LauncherCommand(r)) EmitString(out, word);
  out << YAML::EndSeq;
  EmitEnv(out, LauncherEnv(config, r));
  // mpirun alone: little CPU and memory, on any node.
  out << YAML::Key << "resources" << YAML::Value << YAML::BeginMap;
  EmitQuantities(out, "requests", {{"cpu", "500m"}, {"memory", "512Mi"}});
  out << YAML::EndMap;
  out << YAML::EndMap << YAML::EndSeq;  // containers
  EndReplicaPodSpec(out);
}

// The worker pods' node selector (the instance type) and tolerations (GPU and EFA nodes' taints).
void EmitWorkerPlacement(YAML::Emitter& out, const Resolved& r, const MpiJobOptions& options) {
  if (!options.instance_type.empty()) {
    out << YAML::Key << "nodeSelector" << YAML::Value << YAML::BeginMap << YAML::Key
        << "node.kubernetes.io/instance-type" << YAML::Value << Text{options.instance_type}
        << YAML::EndMap;
  }
  if (r.gpus > 0 || r.efa > 0) {
    out << YAML::Key << "tolerations" << YAML::Value << YAML::BeginSeq;
    if (r.gpus > 0) {
      out << YAML::BeginMap << YAML::Key << "key" << YAML::Value << "nvidia.com/gpu" << YAML::Key
          << "operator" << YAML::Value << "Exists" << YAML::Key << "effect" << YAML::Value
          << "NoSchedule" << YAML::EndMap;
    }
    if (r.efa > 0) {
      out << YAML::BeginMap << YAML::Key << "key" << YAML::Value << "vpc.amazonaws.com/efa"
          << YAML::Key << "operator" << YAML::Value << "Exists" << YAML::Key << "effect"
          << YAML::Value << "NoSchedule" << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
}

// Extended resources and huge pages: requests must equal limits, so both say the same. CPU is
// requested but not limited (a CPU limit throttles NCCL's and the data loader's threads).
void EmitWorkerResources(YAML::Emitter& out, const Resolved& r) {
  std::vector<std::pair<std::string, std::string>> limited;
  if (!r.worker_memory.empty()) limited.emplace_back("memory", r.worker_memory);
  if (r.gpus > 0) limited.emplace_back("nvidia.com/gpu", std::to_string(r.gpus));
  if (r.efa > 0) {
    limited.emplace_back("vpc.amazonaws.com/efa", std::to_string(r.efa));
    limited.emplace_back("hugepages-2Mi", kEfaHugepages);
  }
  std::vector<std::pair<std::string, std::string>> requested = {{"cpu", r.worker_cpu}};
  requested.insert(requested.end(), limited.begin(), limited.end());
  out << YAML::Key << "resources" << YAML::Value << YAML::BeginMap;
  EmitQuantities(out, "requests", requested);
  EmitQuantities(out, "limits", limited);
  out << YAML::EndMap;
}

// The worker container: sshd for the launcher's mpirun, under hpo-worker: on the pod's SIGTERM it
// has this pod's ranks checkpoint (SIGUSR1) before sshd stops.
void EmitWorkerContainer(YAML::Emitter& out, const SweepConfig& config, const Resolved& r) {
  out << YAML::Key << "containers" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << "worker";
  out << YAML::Key << "image" << YAML::Value << Text{r.image};
  out << YAML::Key << "command" << YAML::Value << YAML::Flow << YAML::BeginSeq << "hpo-worker"
      << YAML::EndSeq;
  out << YAML::Key << "env" << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key
      << "name" << YAML::Value << "HPO_WORKER_GRACE_S" << YAML::Key << "value" << YAML::Value
      << YAML::DoubleQuoted
      << std::to_string(static_cast<int64_t>(config.checkpoint.grace_period_s)) << YAML::EndMap
      << YAML::EndSeq;
  EmitWorkerResources(out, r);
  if (r.efa > 0) {
    // EFA registers memory with the device: locked memory must not be limited.
    out << YAML::Key << "securityContext" << YAML::Value << YAML::BeginMap << YAML::Key
        << "capabilities" << YAML::Value << YAML::BeginMap << YAML::Key << "add" << YAML::Value
        << YAML::Flow << YAML::BeginSeq << "IPC_LOCK" << YAML::EndSeq << YAML::EndMap
        << YAML::EndMap;
  }
  out << YAML::Key << "volumeMounts" << YAML::Value << YAML::BeginSeq;
  out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "sweep-config" << YAML::Key
      << "mountPath" << YAML::Value << kConfigMountPath << YAML::Key << "readOnly" << YAML::Value
      << true << YAML::EndMap;
  out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "study" << YAML::Key << "mountPath"
      << YAML::Value << kStudyMountPath << YAML::EndMap;
  out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "dshm" << YAML::Key << "mountPath"
      << YAML::Value << "/dev/shm" << YAML::EndMap;
  out << YAML::EndSeq;
  out << YAML::EndMap << YAML::EndSeq;  // containers
}

// The worker pods' volumes: the sweep's ConfigMap, the study claim and a memory-backed /dev/shm.
void EmitWorkerVolumes(YAML::Emitter& out, const Resolved& r, const MpiJobOptions& options) {
  out << YAML::Key << "volumes" << YAML::Value << YAML::BeginSeq;
  out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "sweep-config" << YAML::Key
      << "configMap" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value
      << Text{r.name + "-sweep"} << YAML::EndMap << YAML::EndMap;
  out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "study" << YAML::Key
      << "persistentVolumeClaim" << YAML::Value << YAML::BeginMap << YAML::Key << "claimName"
      << YAML::Value << Text{options.claim} << YAML::EndMap << YAML::EndMap;
  out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "dshm" << YAML::Key << "emptyDir"
      << YAML::Value << YAML::BeginMap << YAML::Key << "medium" << YAML::Value << "Memory"
      << YAML::Key << "sizeLimit" << YAML::Value << (r.gpus > 0 ? kGpuShmSize : kCpuShmSize)
      << YAML::EndMap << YAML::EndMap;
  out << YAML::EndSeq;
}

// Workers: sshd for the launcher's mpirun; the ranks run here and share the study claim.
void EmitWorkers(YAML::Emitter& out, const SweepConfig& config, const Resolved& r,
                 const MpiJobOptions& options) {
  BeginReplicaPodSpec(out, "Worker", r.workers, config, r);
  EmitWorkerPlacement(out, r, options);
  EmitWorkerContainer(out, config, r);
  EmitWorkerVolumes(out, r, options);
  EndReplicaPodSpec(out);
}

std::string RenderJob(const SweepConfig& config, const Resolved& r, const MpiJobOptions& options) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << "kubeflow.org/v2beta1";
  out << YAML::Key << "kind" << YAML::Value << "MPIJob";
  EmitMetadata(out, r.name, r, options);

  out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "slotsPerWorker" << YAML::Value << r.slots;
  out << YAML::Key << "runPolicy" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "cleanPodPolicy" << YAML::Value << "Running";
  out << YAML::Key << "backoffLimit" << YAML::Value << options.restarts;
  out << YAML::EndMap;
  out << YAML::Key << "sshAuthMountPath" << YAML::Value << "/root/.ssh";
  out << YAML::Key << "mpiImplementation" << YAML::Value << "OpenMPI";
  out << YAML::Key << "launcherCreationPolicy" << YAML::Value << "WaitForWorkersReady";
  out << YAML::Key << "mpiReplicaSpecs" << YAML::Value << YAML::BeginMap;
  EmitLauncher(out, config, r);
  EmitWorkers(out, config, r, options);
  out << YAML::EndMap;  // mpiReplicaSpecs
  out << YAML::EndMap;  // spec
  out << YAML::EndMap;
  return out.c_str();
}

}  // namespace

Status RenderMpiJob(const SweepConfig& config, const MpiJobOptions& options, std::string* yaml) {
  Resolved resolved;
  HPO_RETURN_IF_ERROR(Resolve(config, options, &resolved));
  std::string text;
  if (!options.command_line.empty()) text += "# Rendered by: " + options.command_line + "\n";
  text += "# Sweep " + config.path + " as a Kubeflow MPIJob: " + std::to_string(resolved.workers) +
          " worker(s) x " + std::to_string(resolved.slots) +
          " rank(s) = " + std::to_string(resolved.ranks) + " ranks, " +
          std::to_string(resolved.ranks / config.execution.ranks_per_trial) +
          " trial group(s) of " + std::to_string(config.execution.ranks_per_trial) +
          (resolved.gpus > 0 && config.execution.trials_per_gpu > 1
               ? ", " + std::to_string(config.execution.trials_per_gpu) + " per GPU"
               : "") +
          ".\n" + "# The study goes to /study/" + resolved.name + "/study.h5 on claim '" +
          options.claim + "'. Apply with: kubectl apply -f FILE\n";
  text += RenderConfigMap(config, resolved, options);
  if (text.back() != '\n') text += '\n';
  text += "---\n" + RenderJob(config, resolved, options);
  if (text.back() != '\n') text += '\n';
  *yaml = std::move(text);
  return Status::Ok();
}

}  // namespace hpo
