// hpo::Main: the command line. Parses arguments, calls the library, maps Status to the documented
// exit codes (0 done, 1 failure, 2 bad input, 3 interrupted but saved, 4 a host lost).
#include "hpo/main.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/main_with_hooks.hpp"
#include "cli/torch_hand_over.hpp"
#include "common/diagnostic.hpp"
#include "common/duration_text.hpp"
#include "common/file_io.hpp"
#include "common/job_end_line.hpp"
#include "coord/sweep_status.hpp"
#include "hpo/mpi/communicator.hpp"
#include "hpo/task_runner.hpp"
#include "render/render.hpp"
#include "report/report.hpp"
#include "runtime/blas_kernels.hpp"
#include "runtime/device_plan.hpp"
#include "runtime/job_deadline.hpp"
#include "runtime/preemption.hpp"
#include "runtime/sweep.hpp"
#include "study/study_file.hpp"

namespace po = boost::program_options;

namespace {

constexpr const char* kUsage =
    "usage: hpo <command> [options]\n"
    "\n"
    "commands:\n"
    "  sweep   run a hyperparameter sweep (under mpirun or srun)\n"
    "  report  print a study's leaderboard\n"
    "  status  where a running or finished sweep stands\n"
    "  render  write a Kubeflow MPIJob or a Slurm batch script for a sweep\n"
    "\n"
    "Run 'hpo <command> --help' for a command's options.\n"
    "Exit codes: 0 done, 1 failure, 2 bad input (config, arguments, data, study file),\n"
    "3 interrupted but saved (resume it), 4 a rank's host lost (study saved; resume it).\n";

int ExitWith(const hpo::Status& status, bool print) {
  if (!status.ok() && print) {
    const char* kind = status.code() == hpo::Status::Code::kInterrupted ? "interrupted" : "error";
    hpo::PrintDiagnostic(std::string("hpo: ") + kind + ": " + status.message());
  }
  return static_cast<int>(status.exit_code());
}

// Whether a command's arguments ask for its help (-h or --help anywhere), which wins over
// anything else on the line.
bool AsksForHelp(const std::vector<std::string>& args) {
  return std::any_of(args.begin(), args.end(),
                     [](const std::string& arg) { return arg == "--help" || arg == "-h"; });
}

// Parses `args` against `options` (+ positional); BadInput with Boost's message on error.
hpo::Status ParseArguments(const std::vector<std::string>& args,
                           const po::options_description& options,
                           const po::positional_options_description& positional,
                           po::variables_map* values) {
  try {
    // No guessing: an abbreviated or misspelt option is an error, not the nearest long option.
    const int style =
        po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(
        po::command_line_parser(args).options(options).positional(positional).style(style).run(),
        *values);
    po::notify(*values);
  } catch (const po::error& error) {
    return hpo::Status::BadInput(std::string(error.what()) + " (see --help)");
  }
  return hpo::Status::Ok();
}

// What a program's main gives the command line: its tasks, the test seam, and whether it is the
// torch-free `hpo` that hands libtorch sweeps over (cli/torch_hand_over.hpp).
struct MainSettings {
  const hpo::TaskRegistry& registry;
  hpo::TrainingHooks* training_hooks = nullptr;
  bool hand_over_torch = false;
};

// How much longer than peer_timeout_s a rank waits for the others to start MPI.
constexpr double kStartAllowanceS = 30.0;

// The sweep's MPI job on this rank (`rank` as the launcher numbers it), its arguments parsed: the
// hand-over to hpo-torch and the job deadlines (runtime/job_deadline.hpp) take the config as this
// rank reads it before MPI starts; rank 0 reads it again once MPI runs and reports a bad one.
int RunSweepJob(int argc, char** argv, const hpo::SweepOptions& sweep, const MainSettings& settings,
                const std::string& rank) {
  hpo::SweepConfig config;
  const bool loaded =
      hpo::LoadConfigFile(sweep.config_path, settings.registry.catalog(), sweep.bare, &config).ok();
  if (settings.hand_over_torch && loaded) hpo::HandOverTorchSweep(config, argv, rank);
  hpo::UseFasterBlasKernels(argv, rank);
  const double timeout_s = config.execution.peer_timeout_s;  // the default when not loaded
  // Ranks reach MPI_Init at different times (a library read from a cold file system takes tens
  // of seconds), so start-up allows kStartAllowanceS more. Rank 0 speaks for the job; the others,
  // a moment later, only where rank 0 cannot.
  const double start_s = timeout_s + kStartAllowanceS;
  hpo::ArmJobDeadline(start_s + (rank == "0" ? 0.0 : 2.0), hpo::ExitCode::kPeerLost,
                      "hpo: error on rank " + rank + ": MPI did not start within " +
                          hpo::FormatDuration(start_s) + " (peer_timeout_s and " +
                          hpo::FormatDuration(kStartAllowanceS) +
                          "): a rank of the job has not reached it (its "
                          "process stopped or its host lost); no trial ran, the output folder is "
                          "as it was");
  std::unique_ptr<hpo::MpiSession> session;
  hpo::Status started = hpo::MpiSession::Start(&argc, &argv, &session);
  if (!started.ok()) return ExitWith(started, true);
  const bool root = hpo::Communicator::World().rank() == 0;
  const int code = ExitWith(hpo::RunSweep(sweep, settings.registry), root);
  // Under scripts/hpo-mpirun: its clock for the job's end, so that a rank frozen after
  // MPI_Finalize (while its process exits, where nothing of it runs) cannot hold mpirun either.
  if (root && std::getenv("HPO_MPIRUN_WRAPPED") != nullptr) {
    hpo::PrintDiagnostic(hpo::JobEndLine(code));
  }
  hpo::ArmJobDeadline(timeout_s, static_cast<hpo::ExitCode>(code),
                      std::string(code == 0 ? "hpo: warning" : "hpo: error") + " on rank " + rank +
                          ": the job's end (MPI_Finalize) waited " +
                          hpo::FormatDuration(timeout_s) +
                          " (peer_timeout_s) for a rank that has not come (its process stopped "
                          "or its host lost); this rank's part is done and saved");
  return code;
}

int RunSweepCommand(int argc, char** argv, const std::vector<std::string>& args,
                    const MainSettings& settings) {
  // A preemption signal before the sweep's handlers are in waits for them (runtime/preemption.hpp):
  // a job preempted while it starts then exits 3, resumable, instead of dying of the signal.
  hpo::HoldPreemptionSignals();
  hpo::SweepOptions sweep;
  sweep.training_hooks = settings.training_hooks;
  po::options_description options(
      "usage: mpirun -np N hpo sweep --config FILE [--output DIR] [--data DIR] [--resume]\n"
      "                              [--run-cap N] [--ranks-per-trial R] [--seed S]\n\n"
      "Runs a whole sweep in one MPI job: rank 0 samples trials and writes OUTPUT/study.h5;\n"
      "groups of ranks_per_trial ranks train one trial at a time (data parallel).\n"
      "FILE is an hpo config (a W&B sweep under `sweep:` beside hpo's keys) or a bare W&B\n"
      "sweep file with `program`/`command`; for a bare file, --run-cap, --ranks-per-trial and\n"
      "--seed give what W&B's file has no key for.\n\noptions");
  int64_t run_cap = 0;
  int64_t ranks_per_trial = 0;
  int64_t seed = -1;
  options.add_options()("help,h", "show this help")(
      "config,c", po::value<std::string>(&sweep.config_path)->required(), "the sweep's YAML file")(
      "output,o", po::value<std::string>(&sweep.output_override),
      "output folder (replaces the config's `output`)")(
      "data", po::value<std::string>(&sweep.data_override),
      "data folder on this rank (replaces the config's `data`)")(
      "resume", po::bool_switch(&sweep.resume),
      "continue the study in the output folder (start it if there is none yet); its running "
      "trials continue from their checkpoints")(
      "run-cap", po::value<int64_t>(&run_cap),
      "bare W&B sweep file: the most trials to run (W&B's run_cap)")(
      "ranks-per-trial", po::value<int64_t>(&ranks_per_trial),
      "bare W&B sweep file: ranks of each trial group (default 1)")(
      "seed", po::value<int64_t>(&seed), "bare W&B sweep file: the sweep's seed (default 0)");
  po::variables_map values;
  po::positional_options_description none;
  if (AsksForHelp(args)) {
    std::cout << options << std::endl;
    return 0;
  }
  hpo::Status parsed = ParseArguments(args, options, none, &values);
  // Argument errors are the same on every rank: print once, from rank 0 as mpirun numbers it.
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (rank == nullptr) rank = std::getenv("PMIX_RANK");
  const bool print_here = rank == nullptr || std::string(rank) == "0";
  if (parsed.ok() && values.count("run-cap")) {
    if (run_cap < 1) parsed = hpo::Status::BadInput("--run-cap must be >= 1");
    sweep.bare.run_cap = run_cap;
  }
  if (parsed.ok() && values.count("ranks-per-trial")) {
    if (ranks_per_trial < 1) parsed = hpo::Status::BadInput("--ranks-per-trial must be >= 1");
    sweep.bare.ranks_per_trial = ranks_per_trial;
  }
  if (parsed.ok() && values.count("seed")) {
    if (seed < 0) parsed = hpo::Status::BadInput("--seed must be >= 0");
    sweep.bare.seed = seed;
  }
  if (!parsed.ok()) return ExitWith(parsed, print_here);
  return RunSweepJob(argc, argv, sweep, settings, rank == nullptr ? "0" : rank);
}

// Stores `importance` in the study at `path` (its file or its output folder). A study another
// process is writing (a running sweep holds its lock) or one in a folder that cannot be written is
// left as it is, with a note on stderr: the report goes on without it.
void StoreImportance(const std::string& path, const hpo::StudyContents& study,
                     const hpo::StudyImportance& importance) {
  const hpo::Status status = hpo::StoreStudyImportance(path, study, importance);
  if (!status.ok()) {
    hpo::PrintDiagnostic("hpo: note: the importance is not stored in the study: " +
                         status.message());
  }
}

int RunStatusCommand(const std::vector<std::string>& args, const hpo::TaskRegistry& registry) {
  std::string path;
  po::options_description options(
      "usage: hpo status OUTPUT|STUDY.h5\n\n"
      "Says where a sweep stands, from its study file, while it runs or after: whether a sweep is\n"
      "running it, the trials finished (completed, stopped, failed) of those planned, the trials\n"
      "running with their last epoch, the best so far and, while it runs, the time left. It only\n"
      "reads the study, so the sweep goes on undisturbed; a running sweep's figures are as of its\n"
      "last publish. OUTPUT/report.html, rewritten every few seconds while a sweep runs, draws\n"
      "the same.\n\noptions");
  options.add_options()("help,h", "show this help")("path", po::value<std::string>(&path),
                                                    "the sweep's output folder or study");
  po::positional_options_description positional;
  positional.add("path", 1);
  if (AsksForHelp(args)) {
    std::cout << options << std::endl;
    return 0;
  }
  po::variables_map values;
  hpo::Status parsed = ParseArguments(args, options, positional, &values);
  // Missing, the positional argument is named as the usage names it (Boost would say "--path").
  if (parsed.ok() && path.empty()) {
    parsed = hpo::Status::BadInput(
        "hpo status needs OUTPUT, a sweep's output folder, or its STUDY.h5 (see --help)");
  }
  if (!parsed.ok()) return ExitWith(parsed, true);
  hpo::SweepStatus status;
  const hpo::Status read = hpo::ReadSweepStatus(path, registry.catalog(), &status);
  if (!read.ok()) return ExitWith(read, true);
  std::cout << hpo::FormatSweepStatus(status);
  return 0;
}

int RunReportCommand(const std::vector<std::string>& args, const hpo::TaskRegistry& registry) {
  std::vector<std::string> study_paths;
  std::string format = "table";
  std::string html_path;
  int top_k = 10;
  po::options_description options(
      "usage: hpo report STUDY [STUDY2 ...] [--top K] [--format table|csv|json]\n"
      "                  [--html FILE]\n\n"
      "Prints the leaderboard of a study (best first by the sweep metric's goal) and the best\n"
      "trial's test accuracy; STUDY is a study file or a sweep's output folder. --html also\n"
      "writes the study as one self-contained web page\n"
      "(history, hyperparameter importance, slices, contour, timeline, parallel coordinates,\n"
      "learning curves, sortable table; no network needed to view) and stores the importance\n"
      "(fANOVA) in the study as its param_importance attribute. With several studies, --html\n"
      "writes a comparison instead: their histories and best-so-far lines overlaid by compute.\n"
      "\noptions");
  options.add_options()("help,h", "show this help")(
      "study", po::value<std::vector<std::string>>(&study_paths), "the study file(s)")(
      "top,k", po::value<int>(&top_k)->default_value(10), "rows to show (0: all)")(
      "format,f", po::value<std::string>(&format)->default_value("table"), "table | csv | json")(
      "html", po::value<std::string>(&html_path), "also write the study as an HTML page to FILE");
  po::positional_options_description positional;
  positional.add("study", -1);
  if (AsksForHelp(args)) {
    std::cout << options << std::endl;
    return 0;
  }
  po::variables_map values;
  hpo::Status parsed = ParseArguments(args, options, positional, &values);
  if (parsed.ok() && study_paths.empty()) {  // named as the usage names it, not "--study"
    parsed = hpo::Status::BadInput(
        "hpo report needs a STUDY: a study file or a sweep's output folder (see --help)");
  }
  if (!parsed.ok()) return ExitWith(parsed, true);
  hpo::ReportOptions report;
  report.top_k = top_k;
  if (format == "table") {
    report.format = hpo::ReportFormat::kTable;
  } else if (format == "csv") {
    report.format = hpo::ReportFormat::kCsv;
  } else if (format == "json") {
    report.format = hpo::ReportFormat::kJson;
  } else {
    return ExitWith(
        hpo::Status::BadInput("--format must be table, csv or json, not '" + format + "'"), true);
  }
  if (top_k < 0) return ExitWith(hpo::Status::BadInput("--top must be 0 or more"), true);
  if (study_paths.size() > 1 && report.format != hpo::ReportFormat::kTable) {
    return ExitWith(hpo::Status::BadInput("--format " + format + " takes one study"), true);
  }
  std::vector<hpo::StudyContents> studies(study_paths.size());
  for (size_t i = 0; i < study_paths.size(); ++i) {
    hpo::Status read = hpo::ReadStudy(hpo::StudyPathOf(study_paths[i]), &studies[i]);
    if (!read.ok()) return ExitWith(read, true);
  }
  if (!html_path.empty()) {
    std::string page;
    std::optional<hpo::StudyImportance> importance;
    if (studies.size() == 1) {
      importance = hpo::ComputeStudyImportance(studies[0], registry.catalog());
      page = hpo::FormatHtmlReport(studies[0], registry.catalog(), *importance);
    } else {
      std::vector<hpo::NamedStudy> named;
      for (size_t i = 0; i < studies.size(); ++i) named.push_back({study_paths[i], &studies[i]});
      page = hpo::FormatComparisonHtml(named, registry.catalog());
    }
    const hpo::Status written = hpo::WriteFileAtomically(html_path, page.data(), page.size());
    if (!written.ok()) {
      return ExitWith(hpo::Status::BadInput("--html: " + written.message()), true);
    }
    hpo::PrintDiagnostic("hpo: HTML report: " + html_path);
    if (importance) StoreImportance(study_paths[0], studies[0], *importance);
  }
  for (size_t i = 0; i < studies.size(); ++i) {
    if (studies.size() > 1) std::cout << (i == 0 ? "" : "\n") << "== " << study_paths[i] << "\n";
    std::cout << hpo::FormatReport(studies[i], report);
  }
  return 0;
}

// The render command as typed, minus --output FILE, for the generated file's header: running it
// again renders the same file.
std::string RenderCommandLine(const std::string& kind, const std::vector<std::string>& args) {
  std::string line = "hpo render " + kind;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--output" || args[i] == "-o") {
      ++i;
      continue;
    }
    if (args[i].rfind("--output=", 0) == 0) continue;
    const std::string& arg = args[i];
    if (!arg.empty() && arg.find_first_of(" \t'\"$\\<>|&;()*?`~{}[]!#") == std::string::npos) {
      line += " " + arg;
      continue;
    }
    std::string quoted = "'";  // POSIX shell quoting: ' becomes '\''
    for (const char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += " " + quoted + "'";
  }
  return line;
}

// What `hpo render` reads from its command line: the config, where to write the file, and the
// options of the kind rendered.
struct RenderArguments {
  std::string config_path;
  std::string output_path;
  hpo::MpiJobOptions job;
  hpo::SbatchOptions batch;
};

// The options of `hpo render mpijob`, stored into `arguments`.
void AddMpiJobOptions(RenderArguments* arguments, po::options_description* options) {
  hpo::MpiJobOptions& job = arguments->job;
  options->add(po::options_description(
      "usage: hpo render mpijob --config FILE [options]\n\n"
      "Writes a ConfigMap with the sweep config and a Kubeflow MPIJob (kubeflow.org/v2beta1)\n"
      "that runs it: workers x slots ranks, the study on a ReadWriteMany claim at\n"
      "/study/NAME, a launcher that resumes the study when it restarts.\n\noptions"));
  options->add_options()("help,h", "show this help")(
      "config,c", po::value<std::string>(&arguments->config_path)->required(),
      "the sweep's YAML file")("output,o", po::value<std::string>(&arguments->output_path),
                               "write here instead of to stdout")(
      "name", po::value<std::string>(&job.name), "job name (DNS-1035); default hpo-SWEEPNAME")(
      "namespace", po::value<std::string>(&job.namespace_name), "Kubernetes namespace")(
      "workers", po::value<int64_t>(&job.workers)->default_value(1), "worker pods")(
      "slots-per-worker", po::value<int64_t>(&job.slots_per_worker)->default_value(0),
      "ranks per worker (default: GPUs x trials_per_gpu, or ranks_per_trial on CPU)")(
      "gpus-per-worker", po::value<int64_t>(&job.gpus_per_worker)->default_value(-1),
      "nvidia.com/gpu per worker (default: the instance type's, else 0)")(
      "efa", po::value<int64_t>(&job.efa_per_worker)->default_value(-1),
      "vpc.amazonaws.com/efa devices per worker (default: the instance type's, else 0)")(
      "instance-type", po::value<std::string>(&job.instance_type),
      "EC2 instance type of the worker nodes (p4d.24xlarge, p4de.24xlarge, p5.48xlarge, "
      "g5.48xlarge)")("image", po::value<std::string>()->notifier([&job](const std::string& image) {
    job.image = image;
  }),
                      "container image (default: what scripts/build-image.sh builds, "
                      "hpo-mpi:cuda with GPUs, else hpo-mpi:cpu)")(
      "claim", po::value<std::string>(&job.claim)->default_value(job.claim),
      "ReadWriteMany PersistentVolumeClaim for the study")(
      "worker-memory", po::value<std::string>(&job.worker_memory),
      "memory per worker (default: 1Gi per rank on CPU, none on GPU)")(
      "restarts", po::value<int64_t>(&job.restarts)->default_value(job.restarts),
      "launcher restarts (runPolicy.backoffLimit); each resumes the study");
}

// The options of `hpo render sbatch`, stored into `arguments`.
void AddSbatchOptions(RenderArguments* arguments, po::options_description* options) {
  hpo::SbatchOptions& batch = arguments->batch;
  options->add(po::options_description(
      "usage: hpo render sbatch --config FILE [options]\n\n"
      "Writes a Slurm batch script that runs the sweep with mpirun (or srun --mpi=pmix)\n"
      "inside its allocation and resumes the study when the output folder has one.\n\noptions"));
  options->add_options()("help,h", "show this help")(
      "config,c", po::value<std::string>(&arguments->config_path)->required(),
      "the sweep's YAML file (the script's default; relative paths are resolved against the "
      "submit folder)")("output,o", po::value<std::string>(&arguments->output_path),
                        "write here instead of to stdout")(
      "output-dir", po::value<std::string>(&batch.output_dir),
      "the sweep's output folder (default: the config's `output`)")(
      "job-name", po::value<std::string>(&batch.job_name), "default hpo-SWEEPNAME")(
      "nodes", po::value<int64_t>(&batch.nodes)->default_value(1), "nodes")(
      "ntasks-per-node", po::value<int64_t>(&batch.ntasks_per_node)->default_value(0),
      "ranks per node (default: GPUs x trials_per_gpu, or ranks_per_trial on CPU)")(
      "gpus-per-node", po::value<int64_t>(&batch.gpus_per_node)->default_value(0), "GPUs")(
      "cpus-per-task", po::value<int64_t>(&batch.cpus_per_task)->default_value(0),
      "cores per rank (default: the config's threads_per_rank)")(
      "time", po::value<std::string>(&batch.time)->default_value(batch.time), "time limit")(
      "partition", po::value<std::string>(&batch.partition), "partition")(
      "account", po::value<std::string>(&batch.account), "account")(
      "exclusive", po::bool_switch(&batch.exclusive), "whole nodes only")(
      "preemptible", po::bool_switch(&batch.preemptible),
      "requeue on USR1 (--requeue --signal=B:USR1@LEAD --open-mode=append) and resume")(
      "signal-lead", po::value<int64_t>(&batch.signal_lead_s)->default_value(batch.signal_lead_s),
      "seconds before the time limit that Slurm sends USR1 (preemptible)")(
      "array", po::value<std::string>(&batch.array), "job array spec: one study per task")(
      "launcher", po::value<std::string>(&batch.launcher)->default_value(batch.launcher),
      "mpirun or srun");
}

// `hpo render` without a kind it renders: the usage for --help, else BadInput.
int RunRenderWithoutKind(const std::string& kind) {
  if (kind == "--help" || kind == "-h") {
    std::cout << "usage: hpo render {mpijob|sbatch} --config FILE [options]\n"
                 "Run 'hpo render mpijob --help' or 'hpo render sbatch --help' for the options.\n";
    return 0;
  }
  return ExitWith(hpo::Status::BadInput("render needs a kind, mpijob or sbatch" +
                                        (kind.empty() ? std::string() : ", not '" + kind + "'") +
                                        " (see hpo render --help)"),
                  true);
}

// Renders `config` as the file of `kind`, its header recording the command line `args`.
hpo::Status RenderKind(const std::string& kind, const std::vector<std::string>& args,
                       const hpo::SweepConfig& config, RenderArguments* arguments,
                       std::string* text) {
  if (kind == "mpijob") {
    arguments->job.command_line = RenderCommandLine(kind, args);
    return hpo::RenderMpiJob(config, arguments->job, text);
  }
  arguments->batch.config_path = arguments->config_path;
  arguments->batch.command_line = RenderCommandLine(kind, args);
  return hpo::RenderSbatch(config, arguments->batch, text);
}

// Writes `text` to stdout, or to `output_path` (atomically) when one is given.
int WriteRendered(const std::string& output_path, const std::string& text) {
  if (output_path.empty()) {
    std::cout << text;
    return 0;
  }
  hpo::Status written = hpo::WriteFileAtomically(output_path, text.data(), text.size());
  if (!written.ok()) return ExitWith(hpo::Status::BadInput(written.message()), true);
  return 0;
}

int RunRenderCommand(const std::vector<std::string>& args, const hpo::TaskRegistry& registry) {
  const std::string kind = args.empty() ? "" : args.front();
  if (kind != "mpijob" && kind != "sbatch") return RunRenderWithoutKind(kind);
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  RenderArguments arguments;
  po::options_description options;
  if (kind == "mpijob") {
    AddMpiJobOptions(&arguments, &options);
  } else {
    AddSbatchOptions(&arguments, &options);
  }
  for (const std::string& arg : rest) {
    if (arg == "--help" || arg == "-h") {
      std::cout << options << std::endl;
      return 0;
    }
  }
  po::variables_map values;
  po::positional_options_description none;
  hpo::Status parsed = ParseArguments(rest, options, none, &values);
  if (!parsed.ok()) return ExitWith(parsed, true);
  hpo::SweepConfig config;
  hpo::Status loaded = hpo::LoadConfigFile(arguments.config_path, registry.catalog(),
                                           hpo::BareSweepSettings(), &config);
  if (!loaded.ok()) return ExitWith(loaded, true);
  std::string text;
  hpo::Status rendered = RenderKind(kind, rest, config, &arguments, &text);
  if (!rendered.ok()) return ExitWith(rendered, true);
  return WriteRendered(arguments.output_path, text);
}

int RunMain(int argc, char** argv, const MainSettings& settings) {
  using hpo::ExitCode;
  const hpo::TaskRegistry& registry = settings.registry;
  if (argc < 2) {
    std::cerr << kUsage;
    return static_cast<int>(ExitCode::kBadInput);
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (command == "--version") {
    std::cout << "hpo-mpi " << HPO_VERSION << " (" << hpo::DescribeDeviceBuild() << ")"
              << std::endl;
    return 0;
  }
  if (command == "sweep") return RunSweepCommand(argc, argv, args, settings);
  if (command == "report") return RunReportCommand(args, registry);
  if (command == "status") return RunStatusCommand(args, registry);
  if (command == "render") return RunRenderCommand(args, registry);
  std::cerr << "hpo: error: unknown command '" << command << "'\n\n" << kUsage;
  return static_cast<int>(ExitCode::kBadInput);
}

}  // namespace

namespace hpo {

int Main(int argc, char** argv, const TaskRegistry& registry) {
  return RunMain(argc, argv, MainSettings{registry});
}

int MainWithTrainingHooks(int argc, char** argv, const TaskRegistry& registry,
                          TrainingHooks* training_hooks) {
  return RunMain(argc, argv, MainSettings{registry, training_hooks});
}

int TorchFreeMain(int argc, char** argv) {
  return RunMain(argc, argv, MainSettings{TorchFreeTaskRegistry(), nullptr, true});
}

}  // namespace hpo
