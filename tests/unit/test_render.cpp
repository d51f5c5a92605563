// hpo render: MPIJob and sbatch generation from a parsed config, and every choice the platform
// would reject turned into a BadInput before anything is written.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hpo/config.hpp"
#include "render/render.hpp"

namespace hpo {
namespace {

std::string ConfigText(int64_t ranks_per_trial, const std::string& extra = "") {
  return "sweep:\n"
         "  name: Fashion_MNIST cnn\n"
         "  method: random\n"
         "  metric: {name: val_accuracy, goal: maximize}\n"
         "  run_cap: 4\n"
         "  parameters:\n"
         "    lr: {distribution: log_uniform_values, min: 0.001, max: 0.1}\n"
         "task: synthetic\n"
         "epochs: 2\n"
         "ranks_per_trial: " +
         std::to_string(ranks_per_trial) +
         "\n"
         "threads_per_rank: 2\n"
         "output: runs/render-test\n" +
         extra;
}

SweepConfig Parse(const std::string& text) {
  SweepConfig config;
  const Status status = ParseConfig(text, "configs/render.yaml", &config);
  EXPECT_TRUE(status.ok()) << status.message();
  return config;
}

// The two documents of a rendered MPIJob file: the ConfigMap and the MPIJob.
std::vector<YAML::Node> Documents(const std::string& yaml) {
  std::vector<YAML::Node> documents = YAML::LoadAll(yaml);
  EXPECT_EQ(documents.size(), 2u);
  return documents;
}

std::vector<std::string> LauncherCommand(const YAML::Node& job) {
  return job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"]
      .as<std::vector<std::string>>();
}

std::string ArgumentAfter(const std::vector<std::string>& command, const std::string& flag) {
  for (size_t i = 0; i + 1 < command.size(); ++i) {
    if (command[i] == flag) return command[i + 1];
  }
  return "";
}

TEST(RenderNames, Dns1035Labels) {
  EXPECT_TRUE(IsDns1035Label("hpo-quickstart"));
  EXPECT_TRUE(IsDns1035Label("a1"));
  EXPECT_TRUE(IsDns1035Label(std::string(63, 'a')));
  EXPECT_FALSE(IsDns1035Label(std::string(64, 'a')));
  EXPECT_FALSE(IsDns1035Label(""));
  EXPECT_FALSE(IsDns1035Label("1hpo"));
  EXPECT_FALSE(IsDns1035Label("hpo-"));
  EXPECT_FALSE(IsDns1035Label("Hpo_Sweep"));
  EXPECT_FALSE(IsDns1035Label("hpo.sweep"));
}

TEST(RenderMpiJob, CpuJobCarriesConfigAndRunsRanksOverHostfile) {
  const SweepConfig config = Parse(ConfigText(2));
  MpiJobOptions options;
  options.workers = 3;
  options.command_line = "hpo render mpijob --config configs/render.yaml --workers 3";
  std::string yaml;
  ASSERT_TRUE(RenderMpiJob(config, options, &yaml).ok());
  EXPECT_EQ(yaml.rfind("# Rendered by: hpo render mpijob --config configs/render.yaml", 0), 0u);
  const std::vector<YAML::Node> docs = Documents(yaml);
  const YAML::Node& config_map = docs[0];
  const YAML::Node& job = docs[1];
  EXPECT_EQ(config_map["kind"].as<std::string>(), "ConfigMap");
  // The name comes from the sweep's name; the config travels byte for byte.
  EXPECT_EQ(config_map["metadata"]["name"].as<std::string>(), "hpo-fashion-mnist-cnn-sweep");
  EXPECT_EQ(config_map["data"]["sweep.yaml"].as<std::string>(), config.text);

  EXPECT_EQ(job["apiVersion"].as<std::string>(), "kubeflow.org/v2beta1");
  EXPECT_EQ(job["kind"].as<std::string>(), "MPIJob");
  EXPECT_EQ(job["metadata"]["name"].as<std::string>(), "hpo-fashion-mnist-cnn");
  EXPECT_EQ(job["spec"]["slotsPerWorker"].as<int>(), 2);  // ranks_per_trial on CPU
  const YAML::Node specs = job["spec"]["mpiReplicaSpecs"];
  EXPECT_EQ(specs["Launcher"]["replicas"].as<int>(), 1);
  EXPECT_EQ(specs["Worker"]["replicas"].as<int>(), 3);
  EXPECT_EQ(specs["Launcher"]["restartPolicy"].as<std::string>(), "OnFailure");

  const std::vector<std::string> command = LauncherCommand(job);
  EXPECT_EQ(command.front(), "hpo-mpirun");
  EXPECT_EQ(ArgumentAfter(command, "--hostfile"), "/etc/mpi/hostfile");
  EXPECT_EQ(ArgumentAfter(command, "-np"), "6");
  EXPECT_EQ(ArgumentAfter(command, "--config"), "/etc/hpo/sweep.yaml");
  EXPECT_EQ(ArgumentAfter(command, "--output"), "/study/hpo-fashion-mnist-cnn");
  EXPECT_EQ(command.back(), "--resume");

  const YAML::Node worker = specs["Worker"]["template"]["spec"];
  EXPECT_FALSE(worker["tolerations"]);
  // sshd under hpo-worker, which has the pod's ranks checkpoint on SIGTERM within the grace period.
  EXPECT_EQ(worker["containers"][0]["command"].as<std::vector<std::string>>(),
            std::vector<std::string>{"hpo-worker"});
  EXPECT_EQ(worker["containers"][0]["env"][0]["name"].as<std::string>(), "HPO_WORKER_GRACE_S");
  EXPECT_EQ(worker["containers"][0]["env"][0]["value"].as<std::string>(), "60");
  EXPECT_EQ(worker["terminationGracePeriodSeconds"].as<int>(), 90);
  EXPECT_EQ(worker["containers"][0]["resources"]["requests"]["cpu"].as<std::string>(), "4");
  EXPECT_EQ(worker["containers"][0]["resources"]["requests"]["memory"].as<std::string>(), "2Gi");
  EXPECT_EQ(worker["volumes"][0]["configMap"]["name"].as<std::string>(),
            "hpo-fashion-mnist-cnn-sweep");
  EXPECT_EQ(worker["volumes"][1]["persistentVolumeClaim"]["claimName"].as<std::string>(),
            "hpo-study");
  EXPECT_EQ(worker["volumes"][2]["emptyDir"]["medium"].as<std::string>(), "Memory");
}

TEST(RenderMpiJob, InstanceTypesGiveGpusEfaHugepagesAndTolerations) {
  const SweepConfig config = Parse(ConfigText(4));
  for (const auto& [instance, efa] :
       std::vector<std::pair<std::string, int>>{{"p4d.24xlarge", 4}, {"p5.48xlarge", 32}}) {
    MpiJobOptions options;
    options.workers = 2;
    options.instance_type = instance;
    options.name = "sweep";
    std::string yaml;
    ASSERT_TRUE(RenderMpiJob(config, options, &yaml).ok()) << instance;
    const YAML::Node job = Documents(yaml)[1];
    EXPECT_EQ(job["spec"]["slotsPerWorker"].as<int>(), 8) << instance;
    EXPECT_EQ(ArgumentAfter(LauncherCommand(job), "-np"), "16");
    const YAML::Node worker = job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"];
    EXPECT_EQ(worker["nodeSelector"]["node.kubernetes.io/instance-type"].as<std::string>(),
              instance);
    const YAML::Node limits = worker["containers"][0]["resources"]["limits"];
    EXPECT_EQ(limits["nvidia.com/gpu"].as<int>(), 8);
    EXPECT_EQ(limits["vpc.amazonaws.com/efa"].as<int>(), efa) << instance;
    EXPECT_EQ(limits["hugepages-2Mi"].as<std::string>(), "5120Mi");
    // Extended resources must have requests equal to limits.
    const YAML::Node requests = worker["containers"][0]["resources"]["requests"];
    EXPECT_EQ(requests["vpc.amazonaws.com/efa"].as<int>(), efa);
    EXPECT_EQ(worker["tolerations"].size(), 2u);
    // The EFA environment reaches the ranks through mpirun -x.
    const YAML::Node env =
        job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["env"];
    bool efa_provider = false;
    for (const YAML::Node& variable : env) {
      efa_provider |= variable["name"].as<std::string>() == "FI_PROVIDER" &&
                      variable["value"].as<std::string>() == "efa";
    }
    EXPECT_TRUE(efa_provider);
    const std::vector<std::string> command = LauncherCommand(job);
    EXPECT_NE(std::find(command.begin(), command.end(), "FI_PROVIDER"), command.end());
    EXPECT_NE(std::find(command.begin(), command.end(), "FI_EFA_USE_DEVICE_RDMA"), command.end());
    // CPU is requested, never limited (a limit throttles NCCL's threads).
    EXPECT_TRUE(requests["cpu"]);
    EXPECT_FALSE(limits["cpu"]);
  }
}

TEST(RenderMpiJob, TheImageIsWhatBuildImageBuildsForTheJobUnlessGiven) {
  const SweepConfig config = Parse(ConfigText(4));
  const auto images = [&](const MpiJobOptions& options) {
    std::string yaml;
    EXPECT_TRUE(RenderMpiJob(config, options, &yaml).ok());
    const YAML::Node replicas = Documents(yaml)[1]["spec"]["mpiReplicaSpecs"];
    return replicas["Launcher"]["template"]["spec"]["containers"][0]["image"].as<std::string>() +
           " " + replicas["Worker"]["template"]["spec"]["containers"][0]["image"].as<std::string>();
  };
  MpiJobOptions cpu;
  cpu.name = "sweep";
  EXPECT_EQ(images(cpu), "hpo-mpi:cpu hpo-mpi:cpu");  // scripts/build-image.sh
  MpiJobOptions gpu = cpu;
  gpu.instance_type = "p4d.24xlarge";
  EXPECT_EQ(images(gpu), "hpo-mpi:cuda hpo-mpi:cuda");  // scripts/build-image.sh --cuda
  gpu.image = "123456789012.dkr.ecr.us-east-1.amazonaws.com/hpo-mpi:cuda";
  EXPECT_EQ(images(gpu), *gpu.image + " " + *gpu.image);
}

TEST(RenderMpiJob, DeviceRdmaOnlyWhereTheEfaHasIt) {
  const SweepConfig config = Parse(ConfigText(4));
  MpiJobOptions options;
  options.instance_type = "g5.48xlarge";  // 1 EFA interface, no RDMA
  std::string yaml;
  ASSERT_TRUE(RenderMpiJob(config, options, &yaml).ok());
  EXPECT_NE(yaml.find("vpc.amazonaws.com/efa: \"1\""), std::string::npos);
  EXPECT_NE(yaml.find("FI_PROVIDER"), std::string::npos);
  EXPECT_EQ(yaml.find("FI_EFA_USE_DEVICE_RDMA"), std::string::npos);
}

TEST(RenderMpiJob, RejectsWhatTheOperatorOrKubernetesWould) {
  const SweepConfig config = Parse(ConfigText(4));
  struct Case {
    const char* what;
    MpiJobOptions options;
    const char* message;
  };
  const auto with = [](auto change) {
    MpiJobOptions options;
    options.name = "sweep";
    options.slots_per_worker = 4;
    change(options);
    return options;
  };
  const std::vector<Case> cases = {
      {"ranks do not fit", with([](MpiJobOptions& o) { o.slots_per_worker = 3; }),
       "--workers 1 x 3 slots per worker = 3 ranks, not a multiple of ranks_per_trial 4"},
      {"bad name", with([](MpiJobOptions& o) { o.name = "Hpo_Sweep"; }), "DNS-1035"},
      {"long name", with([](MpiJobOptions& o) {
         o.name = std::string(55, 'a');
         o.workers = 10;
       }),
       "worker pod name"},
      {"no workers", with([](MpiJobOptions& o) { o.workers = 0; }), "--workers must be at least 1"},
      {"unknown instance", with([](MpiJobOptions& o) { o.instance_type = "m7i.large"; }),
       "--instance-type 'm7i.large' is not one of"},
      {"too many gpus", with([](MpiJobOptions& o) {
         o.instance_type = "p4d.24xlarge";
         o.gpus_per_worker = 16;
       }),
       "p4d.24xlarge has 8 GPUs"},
      {"slots vs gpus", with([](MpiJobOptions& o) {
         o.gpus_per_worker = 8;
         o.slots_per_worker = 12;
       }),
       "not a multiple of --gpus-per-worker 8"},
      {"two ranks per gpu without trials_per_gpu", with([](MpiJobOptions& o) {
         o.gpus_per_worker = 8;
         o.slots_per_worker = 16;
       }),
       "--slots-per-worker 16 needs 16 GPUs (one per rank"},
      {"empty image", with([](MpiJobOptions& o) { o.image = ""; }), "--image"},
      {"bad claim", with([](MpiJobOptions& o) { o.claim = "My Claim"; }), "--claim"},
  };
  for (const Case& c : cases) {
    std::string yaml = "untouched";
    const Status status = RenderMpiJob(config, c.options, &yaml);
    EXPECT_EQ(status.code(), Status::Code::kBadInput) << c.what;
    EXPECT_NE(status.message().find(c.message), std::string::npos)
        << c.what << ": " << status.message();
    EXPECT_EQ(yaml, "untouched") << c.what;
  }
}

TEST(RenderMpiJob, TrialsPerGpuPutsThatManySlotsOnEachGpu) {
  const SweepConfig config = Parse(ConfigText(1, "trials_per_gpu: 4\n"));
  MpiJobOptions options;
  options.name = "sweep";
  options.workers = 2;
  options.gpus_per_worker = 8;
  std::string yaml;
  ASSERT_TRUE(RenderMpiJob(config, options, &yaml).ok());
  EXPECT_NE(yaml.find("2 worker(s) x 32 rank(s) = 64 ranks, 64 trial group(s) of 1, 4 per GPU.\n"),
            std::string::npos);
  const YAML::Node job = Documents(yaml)[1];
  EXPECT_EQ(job["spec"]["slotsPerWorker"].as<int>(), 32);
  EXPECT_EQ(ArgumentAfter(LauncherCommand(job), "-np"), "64");
  const YAML::Node resources =
      job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"];
  EXPECT_EQ(resources["limits"]["nvidia.com/gpu"].as<int>(), 8);
  EXPECT_EQ(resources["requests"]["cpu"].as<std::string>(), "64");  // 32 slots x 2 threads

  // The instance type's GPUs count the same way.
  options.gpus_per_worker = -1;
  options.instance_type = "p4d.24xlarge";
  ASSERT_TRUE(RenderMpiJob(config, options, &yaml).ok());
  EXPECT_EQ(Documents(yaml)[1]["spec"]["slotsPerWorker"].as<int>(), 32);

  // Up to 8 x 4 slots are accepted when they fill whole GPUs, a multiple of 8 or not.
  for (const int64_t slots : {4, 12, 32}) {
    options.slots_per_worker = slots;
    ASSERT_TRUE(RenderMpiJob(config, options, &yaml).ok()) << slots;
    const YAML::Node fewer = Documents(yaml)[1];
    EXPECT_EQ(fewer["spec"]["slotsPerWorker"].as<int64_t>(), slots);
    EXPECT_EQ(ArgumentAfter(LauncherCommand(fewer), "-np"), std::to_string(2 * slots));
  }

  // CPU workers keep ranks_per_trial slots: the key shares GPUs only.
  options = MpiJobOptions();
  ASSERT_TRUE(RenderMpiJob(config, options, &yaml).ok());
  EXPECT_EQ(Documents(yaml)[1]["spec"]["slotsPerWorker"].as<int>(), 1);
  EXPECT_EQ(yaml.find("per GPU"), std::string::npos);
}

TEST(RenderMpiJob, TrialsPerGpuRejectsSlotsTheGpusCannotTake) {
  const SweepConfig config = Parse(ConfigText(1, "trials_per_gpu: 4\n"));
  struct Case {
    int64_t slots;
    std::vector<std::string> pieces;
  };
  const std::vector<Case> cases = {
      {33,
       {"--slots-per-worker 33 needs 9 GPUs with trials_per_gpu 4", "too few GPUs",
        "--gpus-per-worker 8 it runs at most 8 x 4 = 32 ranks"}},
      {64, {"--slots-per-worker 64 needs 16 GPUs", "too few GPUs", "--gpus-per-worker 8"}},
      {6,
       {"--slots-per-worker 6 is not a multiple of trials_per_gpu 4",
        "node-local ranks 4*g .. 4*g+3 share GPU g", "a multiple of 4 up to 32"}},
  };
  for (const Case& c : cases) {
    MpiJobOptions options;
    options.name = "sweep";
    options.gpus_per_worker = 8;
    options.slots_per_worker = c.slots;
    std::string yaml = "untouched";
    const Status status = RenderMpiJob(config, options, &yaml);
    EXPECT_EQ(status.code(), Status::Code::kBadInput) << c.slots;
    for (const std::string& piece : c.pieces) {
      EXPECT_NE(status.message().find(piece), std::string::npos)
          << c.slots << ": " << status.message();
    }
    EXPECT_EQ(yaml, "untouched") << c.slots;
  }

  // GPUs x trials_per_gpu past int64 is refused, not wrapped around.
  const SweepConfig huge = Parse(ConfigText(1, "trials_per_gpu: 9223372036854775807\n"));
  MpiJobOptions options;
  options.name = "sweep";
  options.gpus_per_worker = 8;
  std::string yaml = "untouched";
  const Status status = RenderMpiJob(huge, options, &yaml);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find("too many ranks for one worker"), std::string::npos)
      << status.message();
  EXPECT_EQ(yaml, "untouched");
}

TEST(RenderMpiJob, ConfigTextSurvivesAnyShape) {
  // The ConfigMap must give back the exact bytes, whatever the file's layout.
  for (const std::string& tail :
       {std::string(""), std::string("# trailing comment"),
        std::string("# two blank lines follow\n\n"), std::string("# tab\there\n")}) {
    SweepConfig config = Parse(ConfigText(2, tail));
    std::string yaml;
    ASSERT_TRUE(RenderMpiJob(config, MpiJobOptions(), &yaml).ok());
    EXPECT_EQ(Documents(yaml)[0]["data"]["sweep.yaml"].as<std::string>(), config.text)
        << "tail: " << tail;
  }
}

TEST(RenderMpiJob, StringsThatLookLikeNumbersOrBooleansAreQuoted) {
  // Kubernetes reads YAML 1.1: a plain `yes` is a boolean and a plain 16 a number.
  const SweepConfig config = Parse(ConfigText(2));
  MpiJobOptions options;
  options.name = "yes";
  options.workers = 8;
  std::string yaml;
  ASSERT_TRUE(RenderMpiJob(config, options, &yaml).ok());
  EXPECT_NE(yaml.find("  name: \"yes\"\n"), std::string::npos);
  EXPECT_NE(yaml.find("- \"16\"\n"), std::string::npos);  // -np 16
  EXPECT_NE(yaml.find("- --hostfile\n"), std::string::npos);
}

TEST(RenderSbatch, DirectivesFollowTheOptions) {
  const SweepConfig config = Parse(ConfigText(2));
  SbatchOptions options;
  options.config_path = "configs/render.yaml";
  options.nodes = 2;
  options.gpus_per_node = 4;
  options.exclusive = true;
  options.partition = "gpu";
  options.time = "1-12:00:00";
  std::string script;
  ASSERT_TRUE(RenderSbatch(config, options, &script).ok());
  EXPECT_EQ(script.rfind("#!/bin/bash\n", 0), 0u);
  for (const char* line :
       {"#SBATCH --job-name=hpo-fashion-mnist-cnn\n", "#SBATCH --nodes=2\n",
        "#SBATCH --ntasks-per-node=4\n", "#SBATCH --cpus-per-task=2\n",
        "#SBATCH --gpus-per-node=4\n", "#SBATCH --exclusive\n", "#SBATCH --time=1-12:00:00\n",
        "#SBATCH --partition=gpu\n", "#SBATCH --output=%x-%j.out\n",
        "HPO_DEFAULT_CONFIG='configs/render.yaml'\n", "HPO_DEFAULT_OUTPUT='runs/render-test'\n",
        "HPO_LAUNCHER='mpirun'\n", "HPO_PREEMPTIBLE=0\n"}) {
    EXPECT_NE(script.find(line), std::string::npos) << line;
  }
  EXPECT_EQ(script.find("#SBATCH --requeue"), std::string::npos);
  // Every #SBATCH line comes before the first command, or sbatch ignores it.
  const size_t last_directive = script.rfind("\n#SBATCH ");
  const size_t first_command = script.find("\nHPO_DEFAULT_CONFIG=");
  EXPECT_LT(last_directive, first_command);
}

TEST(RenderSbatch, PreemptibleAndArrayScripts) {
  const SweepConfig config = Parse(ConfigText(2));
  SbatchOptions options;
  options.config_path = "configs/render.yaml";
  options.preemptible = true;
  options.array = "0-3%2";
  std::string script;
  ASSERT_TRUE(RenderSbatch(config, options, &script).ok());
  for (const char* line :
       {"#SBATCH --requeue\n", "#SBATCH --signal=B:USR1@120\n", "#SBATCH --open-mode=append\n",
        "#SBATCH --array=0-3%2\n", "#SBATCH --output=%x-%A_%a.out\n", "HPO_PREEMPTIBLE=1\n",
        "#SBATCH --ntasks-per-node=2\n"}) {
    EXPECT_NE(script.find(line), std::string::npos) << line;
  }
  // The shared body follows: it requeues an interrupted sweep.
  EXPECT_NE(script.find("scontrol requeue"), std::string::npos);
}

TEST(RenderSbatch, TrialsPerGpuSetsTasksPerNode) {
  const SweepConfig config = Parse(ConfigText(1, "trials_per_gpu: 4\n"));
  SbatchOptions options;
  options.config_path = "configs/render.yaml";
  options.nodes = 2;
  options.gpus_per_node = 8;
  std::string script;
  ASSERT_TRUE(RenderSbatch(config, options, &script).ok());
  EXPECT_NE(script.find("#SBATCH --ntasks-per-node=32\n"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --gpus-per-node=8\n"), std::string::npos);

  options.ntasks_per_node = 12;  // three whole GPUs: not a multiple of 8, still accepted
  ASSERT_TRUE(RenderSbatch(config, options, &script).ok());
  EXPECT_NE(script.find("#SBATCH --ntasks-per-node=12\n"), std::string::npos);

  for (const auto& [tasks, piece] : std::vector<std::pair<int64_t, std::string>>{
           {40, "--ntasks-per-node 40 needs 10 GPUs with trials_per_gpu 4"},
           {10, "--ntasks-per-node 10 is not a multiple of trials_per_gpu 4"}}) {
    options.ntasks_per_node = tasks;
    script = "untouched";
    const Status status = RenderSbatch(config, options, &script);
    EXPECT_EQ(status.code(), Status::Code::kBadInput) << tasks;
    EXPECT_NE(status.message().find(piece), std::string::npos) << status.message();
    EXPECT_NE(status.message().find("--gpus-per-node 8"), std::string::npos) << status.message();
    EXPECT_EQ(script, "untouched") << tasks;
  }
  options.ntasks_per_node = 40;
  EXPECT_NE(RenderSbatch(config, options, &script).message().find("the node has too few GPUs"),
            std::string::npos);
}

TEST(RenderSbatch, RejectsBadChoices) {
  const SweepConfig config = Parse(ConfigText(4, "checkpoint: {grace_period_s: 200}\n"));
  struct Case {
    const char* what;
    void (*change)(SbatchOptions&);
    const char* message;
  };
  const std::vector<Case> cases = {
      {"ranks", [](SbatchOptions& o) { o.ntasks_per_node = 3; },
       "--nodes 1 x 3 tasks per node = 3 ranks, not a multiple of ranks_per_trial 4"},
      {"time", [](SbatchOptions& o) { o.time = "1 hour"; }, "--time '1 hour'"},
      {"signal lead", [](SbatchOptions& o) { o.preemptible = true; },
       "--signal-lead 120 s must exceed checkpoint.grace_period_s 200 s"},
      {"launcher", [](SbatchOptions& o) { o.launcher = "aprun"; }, "--launcher"},
      {"array", [](SbatchOptions& o) { o.array = "a-b"; }, "--array 'a-b'"},
      {"quote", [](SbatchOptions& o) { o.output_dir = "runs/it's"; }, "--output-dir"},
      {"job name", [](SbatchOptions& o) { o.job_name = "my job"; }, "--job-name 'my job'"},
      {"gpus",
       [](SbatchOptions& o) {
         o.gpus_per_node = 8;
         o.ntasks_per_node = 4;
       },
       "not a multiple of --gpus-per-node 8"},
      {"two tasks per gpu without trials_per_gpu",
       [](SbatchOptions& o) {
         o.gpus_per_node = 4;
         o.ntasks_per_node = 8;
       },
       "--ntasks-per-node 8 needs 8 GPUs (one per rank"},
      {"nodes", [](SbatchOptions& o) { o.nodes = 0; }, "--nodes must be at least 1"},
  };
  for (const Case& c : cases) {
    SbatchOptions options;
    options.config_path = "configs/render.yaml";
    c.change(options);
    std::string script = "untouched";
    const Status status = RenderSbatch(config, options, &script);
    EXPECT_EQ(status.code(), Status::Code::kBadInput) << c.what;
    EXPECT_NE(status.message().find(c.message), std::string::npos)
        << c.what << ": " << status.message();
    EXPECT_EQ(script, "untouched") << c.what;
  }
}

}  // namespace
}  // namespace hpo
