#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "common/count_text.hpp"
#include "common/diagnostic.hpp"
#include "common/file_io.hpp"
#include "common/launch_warning.hpp"
#include "coord/coordinator.hpp"
#include "device_plan.hpp"
#include "group_trials.hpp"
#include "hpo/config.hpp"
#include "hpo/mpi/communicator.hpp"
#include "hpo/mpi/group_layout.hpp"
#include "hpo/task_runner.hpp"
#include "job_deadline.hpp"
#include "live_report.hpp"
#include "mpi/control_plane.hpp"
#include "mpi/peer_watch.hpp"
#include "mpi/status_collectives.hpp"
#include "preemption.hpp"
#include "runtime/sweep.hpp"
#include "runtime/sweep_session.hpp"
#include "sched/scheduler.hpp"
#include "search/searcher.hpp"
#include "study/study_file.hpp"
#include "trial_files.hpp"

namespace hpo {

namespace {

namespace fs = std::filesystem;

// Kept current while the sweep runs (LiveReport), reloading itself this often.
constexpr const char* kLiveReportFileName = "report.html";
constexpr double kLiveReportSeconds = 5.0;

double SteadySeconds() {
  using Clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

std::string UtcTimestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

// Final weights under OUTPUT/models (the coordinator discards all but the best trial's) and
// checkpoints under OUTPUT/checkpoints, a file or a command trial's folder (discarded once a
// trial's result is in the study).
class ModelFiles final : public TrialArtifacts {
 public:
  explicit ModelFiles(std::string output) : output_(std::move(output)) {}
  void Discard(int64_t trial_id) override {
    std::error_code ignored;
    fs::remove(WeightsPath(output_, trial_id), ignored);
  }
  void DiscardCheckpoint(int64_t trial_id) override {
    std::error_code ignored;
    fs::remove(CheckpointPath(output_, trial_id), ignored);
    fs::remove_all(CheckpointDir(output_, trial_id), ignored);
  }
  Status CopyCheckpoint(int64_t from, int64_t to) override {
    DiscardCheckpoint(to);
    std::error_code error;
    const fs::path file = CheckpointPath(output_, from);
    if (fs::exists(file, error)) {
      // To a temporary name, then renamed: a crash never leaves half a checkpoint.
      const fs::path target = CheckpointPath(output_, to);
      const fs::path partial = target.string() + ".copying";
      fs::copy_file(file, partial, fs::copy_options::overwrite_existing, error);
      if (!error) fs::rename(partial, target, error);
      if (error) return Status::Failure("copying " + file.string() + ": " + error.message());
    }
    const fs::path folder = CheckpointDir(output_, from);
    if (fs::is_directory(folder, error)) {
      fs::copy(folder, CheckpointDir(output_, to), fs::copy_options::recursive, error);
      if (error) return Status::Failure("copying " + folder.string() + ": " + error.message());
    }
    return Status::Ok();
  }

 private:
  std::string output_;
};

StudyLayout MakeStudyLayout(const SweepConfig& config) {
  StudyLayout layout;
  for (const ParameterSpec& spec : config.sweep.parameters) {
    StudyParamColumn column;
    column.name = spec.name;
    column.type = spec.type;
    column.conditional = spec.condition.has_value();
    if (spec.type == ParamType::kString) {
      size_t longest = 1;
      for (const ParamValue& value : spec.values) {
        longest = std::max(longest, FormatParamValue(value).size());
      }
      column.string_width = longest + 1;
    }
    layout.params.push_back(column);
  }
  layout.metric_names = config.metric_names;
  layout.lineage = config.pbt.enabled;
  for (size_t j = 1; j < config.sweep.objectives.size(); ++j) {
    layout.further_objectives.push_back(
        {config.sweep.objectives[j].name, GoalName(config.sweep.objectives[j].goal)});
  }
  return layout;
}

// Rank 0, before any rank loads its data: with --resume and a study in the output folder, opens
// that study (which must come from the same sweep) and reads it into `resumed`; a study there
// without --resume is BadInput. Writes nothing.
Status OpenResumedStudy(const SweepConfig& config, const SweepOptions& options,
                        std::unique_ptr<StudyWriter>* study,
                        std::optional<StudyContents>* resumed) {
  const fs::path study_path = fs::path(config.execution.output) / kStudyFileName;
  std::error_code error;
  if (!fs::exists(study_path, error)) return Status::Ok();
  if (!options.resume) {
    return Status::BadInput(study_path.string() +
                            ": a study already exists here; continue it with --resume or "
                            "choose another --output");
  }
  StudyContents contents;
  HPO_RETURN_IF_ERROR(ReadStudy(study_path.string(), &contents));
  HPO_RETURN_IF_ERROR(
      CheckSameSweep(contents.attributes.config, config).WithContext(study_path.string()));
  HPO_RETURN_IF_ERROR(StudyWriter::Open(study_path.string(), MakeStudyLayout(config), study));
  *resumed = std::move(contents);
  return Status::Ok();
}

// Rank 0's side of the study between the steps of RunSweep: where it is, the files the
// coordinator discards, the coordinator's collaborators until the session makes it, and the
// study read back on --resume.
struct RootStudy {
  RootStudy(const SweepConfig& config, const TaskCatalog& catalog)
      : path((fs::path(config.execution.output) / kStudyFileName).string()),
        model_files(config.execution.output),
        live_report(path, (fs::path(config.execution.output) / kLiveReportFileName).string(),
                    catalog, kLiveReportSeconds) {}
  std::string path;
  ModelFiles model_files;
  LiveReport live_report;  // OUTPUT/report.html
  CoordinatorDeps deps;
  std::optional<StudyContents> resumed;
};

// Rank 0: the session's coordinator over `study`, restored from the resumed study if any.
Status Coordinate(const SweepConfig& config, std::unique_ptr<StudyWriter> study,
                  RootStudy* root_study, SweepSession* session) {
  root_study->deps.artifacts = &root_study->model_files;
  root_study->deps.progress = &std::cout;
  root_study->deps.clock = SteadySeconds;
  root_study->deps.after_publish = [live_report = &root_study->live_report] {
    live_report->Refresh();
  };
  session->Coordinate(config, std::move(study), std::move(root_study->deps));
  if (!root_study->resumed) return Status::Ok();
  return session->coordinator().Restore(*root_study->resumed).WithContext(root_study->path);
}

// Rank 0, before any rank loads its data: the searcher and scheduler, the warm-start studies'
// trials and, with --resume, the study in the output folder and its coordinator. Sets `finished`
// when that study has nothing left to run and its best trial recorded.
Status OpenSweep(const SweepConfig& config, const TaskCatalog& catalog, const SweepOptions& options,
                 RootStudy* root_study, SweepSession* session, bool* finished) {
  HPO_RETURN_IF_ERROR(MakeSearcher(config, &root_study->deps.searcher));
  HPO_RETURN_IF_ERROR(MakeScheduler(config, &root_study->deps.scheduler));
  HPO_RETURN_IF_ERROR(
      LoadWarmStart(config, catalog, root_study->path, &root_study->deps.warm_start));
  const WarmStart& warm_start = root_study->deps.warm_start;
  const bool cold = !config.warm_start.empty() && warm_start.trials.empty();
  for (const std::string& line : warm_start.summary) {
    if (cold) {
      PrintDiagnostic("hpo: warning: " + line + "; none is used: the sweep starts cold");
    } else {
      std::cout << line << "\n";
    }
  }
  std::unique_ptr<StudyWriter> study;
  HPO_RETURN_IF_ERROR(OpenResumedStudy(config, options, &study, &root_study->resumed));
  if (!root_study->resumed) return Status::Ok();
  HPO_RETURN_IF_ERROR(Coordinate(config, std::move(study), root_study, session));
  *finished = session->coordinator().NothingLeftToRun() &&
              root_study->resumed->extra_attributes.count("best_trial_id") != 0;
  return Status::Ok();
}

// Rank 0, once every rank has its data (so that bad input leaves nothing on disk): creates the
// output folders and, unless a study was resumed (its coordinator made already), a new study
// file and its coordinator.
Status CreateOutput(const SweepConfig& config, int world_size, RootStudy* root_study,
                    SweepSession* session) {
  const fs::path output(config.execution.output);
  std::error_code error;
  fs::create_directories(output / "models", error);
  if (!error) fs::create_directories(output / "checkpoints", error);
  if (error) {
    return Status::BadInput("output folder " + output.string() +
                            ": cannot create: " + error.message());
  }
  if (root_study->resumed) return Status::Ok();
  StudyAttributes attributes;
  attributes.config = config.text;
  attributes.metric_name = config.sweep.metric.name;
  attributes.metric_goal = GoalName(config.sweep.metric.goal);
  attributes.world_size = world_size;
  attributes.start_time = UtcTimestamp();
  attributes.version = HPO_VERSION;
  std::unique_ptr<StudyWriter> study;
  HPO_RETURN_IF_ERROR(
      StudyWriter::Create(root_study->path, MakeStudyLayout(config), attributes, &study));
  return Coordinate(config, std::move(study), root_study, session);
}

// `name` as a YAML mapping key: plain when it is a simple name (dotted ones included), otherwise
// double-quoted (W&B names such as "Eval|hits@10").
std::string YamlKey(const std::string& name) {
  const bool plain =
      !name.empty() && std::isalpha(static_cast<unsigned char>(name[0])) &&
      std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
      });
  if (plain) return name;
  std::string quoted = "\"";
  for (char c : name) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

// The best trial's hyperparameters (and model, when it has one): OUTPUT/models/best.yaml, whole
// or not at all (written atomically). Failure "writing PATH: reason" when it cannot be written.
Status WriteBestTrialFile(const SweepConfig& config, const TrialResult& best,
                          const std::string& model_path) {
  const fs::path path = fs::path(config.execution.output) / "models" / "best.yaml";
  std::ostringstream out;
  out << "trial_id: " << best.trial_id << "\n"
      << config.sweep.metric.name << ": " << FormatParamValueExact(ParamValue(best.objective))
      << "\n";
  if (!model_path.empty()) out << "weights: " << fs::absolute(model_path).string() << "\n";
  out << "parameters:\n";
  for (const NamedValue& entry : best.params) {
    out << "  " << YamlKey(entry.name) << ": " << FormatParamValueExact(entry.value) << "\n";
  }
  const std::string text = out.str();
  return WriteFileAtomically(path.string(), text.data(), text.size());
}

void PrintBestTrial(const SweepConfig& config, const TrialResult& best) {
  std::cout << "best trial " << best.trial_id << ": " << config.sweep.metric.name << ' '
            << best.objective;
  for (const NamedValue& entry : best.params) {
    std::cout << ' ' << entry.name << '=' << FormatParamValue(entry.value);
  }
  std::cout << std::endl;
}

// Rank 0, resuming a study with nothing left to run whose best trial is already recorded: says
// so without training, evaluating or loading data, and closes the study.
Status ReportFinishedStudy(const SweepConfig& config, SweepSession& session,
                           const std::string& study_path) {
  const Coordinator& coordinator = session.coordinator();
  std::cout << "the study is already finished: " << CountOf(coordinator.trials_finished(), "trial")
            << ", nothing left to run" << std::endl;
  if (coordinator.best_trial()) PrintBestTrial(config, *coordinator.best_trial());
  std::cout << "study: " << fs::absolute(study_path).string() << std::endl;
  return session.study().Close();
}

// Why a sweep that ended without a best trial failed: nothing ran, or every trial failed.
std::string NoScoreMessage(const SweepConfig& config, const Coordinator& coordinator,
                           const std::string& study_path) {
  const std::string metric = config.sweep.metric.name;
  if (coordinator.trials_finished() == 0) {
    return "no trial finished, so none produced a " + metric + " (study " + study_path + ")";
  }
  return "every trial failed: none of the " + std::to_string(coordinator.trials_finished()) +
         " finished trials produced a finite " + metric + "; the last failure, " +
         coordinator.last_failure() + " (every trial is in " + study_path + ")";
}

// Rank 0, after every group is done: the best trial on the task's held-out test split, in the
// study and in OUTPUT/models/best.yaml. Failure when either cannot be written.
Status RecordBestTrial(const SweepConfig& config, const Coordinator& coordinator,
                       TaskRunner& runner, StudyWriter* study, const std::string& study_path) {
  const std::optional<TrialResult>& best = coordinator.best_trial();
  std::cout << "sweep finished: " << CountOf(coordinator.trials_finished(), "trial");
  if (coordinator.trials_paused() != 0) {
    std::cout << ", " << coordinator.trials_paused() << " left paused "
              << coordinator.why_left_paused() << " (their checkpoints are kept)";
  }
  if (!coordinator.end_reason().empty())
    std::cout << " (ended early: " << coordinator.end_reason() << ')';
  std::cout << std::endl;
  if (!best) {
    std::cout << "no trial produced a " << config.sweep.metric.name << std::endl;
  } else {
    BestTrialReport report;
    const Status evaluated = runner.EvaluateBest(*best, config.execution.output, &report);
    Status recorded = study->SetAttribute("best_trial_id", best->trial_id);
    if (recorded.ok() && !report.model_path.empty()) {
      recorded = study->SetAttribute("best_model", report.model_path);
    }
    for (const MetricTable& table : report.test_tables) {
      if (recorded.ok() && evaluated.ok()) recorded = study->StageTable(table);
    }
    for (const auto& [name, value] : report.test_metrics) {
      if (recorded.ok() && evaluated.ok()) recorded = study->SetAttribute(name, value);
    }
    if (recorded.ok()) recorded = study->Publish({});
    if (recorded.ok()) recorded = WriteBestTrialFile(config, *best, report.model_path);
    if (!recorded.ok()) return recorded;
    PrintBestTrial(config, *best);
    if (evaluated.ok()) {
      for (const auto& [name, value] : report.test_metrics) {
        std::string words = name;  // test_accuracy -> "test accuracy"
        std::replace(words.begin(), words.end(), '_', ' ');
        std::cout << "best trial " << words << ": " << value << " (held-out test split)"
                  << std::endl;
      }
    } else {
      PrintDiagnostic("hpo: warning: could not evaluate the best trial on the test set: " +
                      evaluated.message());
    }
  }
  std::cout << "study: " << fs::absolute(study_path).string() << std::endl;
  return Status::Ok();
}

// Rank 0's side of a lost host: the watch thread raises it; the coordinator thread, between two
// messages, publishes the study (whose running_trials keep every trial that was running, for
// --resume) and ends the job naming the trials that ran on the lost ranks. Once the coordinator
// has finished (every result published), the watch thread ends the job itself.
class LostPeerAlarm {
 public:
  void Raise(const LostPeers& lost) {
    std::lock_guard<std::mutex> lock(mutex_);
    lost_ = lost;
  }
  // Empty until raised.
  std::optional<LostPeers> lost() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return lost_;
  }
  // Rank 0: the session and the study the sweep writes, once they exist (the watch starts
  // before them). The session must outlive the watch.
  void SetSession(const SweepSession* session) {
    std::lock_guard<std::mutex> lock(mutex_);
    session_ = session;
  }
  void SetStudyPath(const std::string& path) {
    std::lock_guard<std::mutex> lock(mutex_);
    study_path_ = path;
  }
  std::string study_path() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return study_path_;
  }
  // Whether rank 0's coordinator thread serves (then it ends the job itself, EndForLostPeers).
  bool serving() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return session_ != nullptr && session_->serving();
  }

 private:
  mutable std::mutex mutex_;
  std::optional<LostPeers> lost_;
  const SweepSession* session_ = nullptr;
  std::string study_path_;
};

// `study_path` empty: the sweep was still starting (its study not yet opened).
std::string LostPeerMessage(const LostPeers& lost, const std::string& study_path) {
  const std::string what = "lost contact with " + lost.Describe() +
                           ": their host is down or cut off from rank 0 on " + lost.observer_host;
  if (study_path.empty()) {
    return what + ", while the sweep was starting: no trial ran, the output folder is as it was";
  }
  return what + ". The study is saved in " + study_path +
         "; the trials that were running continue from their last checkpoints with --resume";
}

// Rank 0, once at start-up: a job that spans hosts under plain mpirun is told to use
// scripts/hpo-mpirun (launch_warning.hpp). Rank 0's node holds every rank unless it spans hosts.
void WarnAboutPlainMpirun(const GroupLayout& layout, const Communicator& world) {
  const bool spans_hosts = layout.ranks_on_node < world.size();
  const auto environment = [](const char* name) -> const char* { return std::getenv(name); };
  if (const std::optional<std::string> warning = PlainMpirunWarning(spans_hosts, environment)) {
    PrintDiagnostic(*warning);
  }
}

// On rank 0's coordinator thread: publishes the study and ends the job.
[[noreturn]] void EndForLostPeers(const LostPeers& lost, const GroupLayout& layout,
                                  Coordinator& coordinator, const std::string& study_path) {
  std::vector<int64_t> trials;
  for (int rank : lost.ranks) {
    const int64_t trial =
        coordinator.RunningTrial(layout.group_of_world_rank[static_cast<size_t>(rank)]);
    if (trial >= 0 && std::find(trials.begin(), trials.end(), trial) == trials.end()) {
      trials.push_back(trial);
    }
  }
  std::string running = trials.empty() ? "no trial was running there" : "trial";
  if (trials.size() > 1) running += "s";
  for (size_t i = 0; i < trials.size(); ++i) {
    running += (i == 0 ? " " : ", ") + std::to_string(trials[i]);
  }
  if (!trials.empty()) running += trials.size() > 1 ? " were running there" : " was running there";
  const Status published = coordinator.Publish();
  std::string message = LostPeerMessage(lost, study_path) + " (" + running + ")";
  if (!published.ok()) message += "; publishing the study failed: " + published.message();
  AbortJob(ExitCode::kPeerLost, message);
}

// Every rank: the sweep's config, read and validated on rank 0 (whose failure is every rank's
// status) and parsed from rank 0's text on the others, with the command line's overrides.
Status ShareConfig(const Communicator& world, const SweepOptions& options,
                   const TaskRegistry& registry, SweepConfig* config) {
  const bool root = world.rank() == 0;
  Status status;
  if (root) {
    status = LoadConfigFile(options.config_path, registry.catalog(), options.bare, config);
    if (status.ok() && !config->ignored_keys.empty()) {
      std::string keys;
      for (const std::string& key : config->ignored_keys) keys += "\n  " + key;
      PrintDiagnostic("hpo: warning: " + options.config_path +
                      ": not used by hpo (this job's ranks run the trials):" + keys);
    }
  }
  HPO_RETURN_IF_ERROR(BroadcastStatus(world, status));
  const std::string text = BroadcastString(world, root ? config->text : std::string());
  if (!root) {
    // config.text is always a wrapped config (a bare file's is wrapped by rank 0's parse).
    Status parsed =
        ParseConfig(text, options.config_path, registry.catalog(), BareSweepSettings(), config);
    if (!parsed.ok()) AbortJob(ExitCode::kFailure, "config did not parse as on rank 0");
  }
  if (!options.output_override.empty()) config->execution.output = options.output_override;
  if (!options.data_override.empty()) {
    config->task_options.values["data"] = TaskOption{options.data_override, 0};
  }
  return Status::Ok();
}

// Every rank, collective over its group: this rank's runner of the config's task (its data loaded
// then), given `training_hooks` when it trains models. A task without a runner, or a runner that
// cannot be prepared, ends the job.
std::unique_ptr<TaskRunner> PrepareRunner(const SweepConfig& config, const GroupLayout& layout,
                                          const TaskRegistry& registry,
                                          TrainingHooks* training_hooks) {
  const TaskRunnerFactory* factory = registry.FindFactory(config.execution.task);
  if (factory == nullptr) {
    AbortJob(ExitCode::kFailure, "task " + config.execution.task + " has no runner");
  }
  std::unique_ptr<TaskRunner> runner;
  const Status status = (*factory)(config, layout, &runner);
  if (!status.ok()) AbortJob(status.exit_code(), status.message());
  if (auto* trainer = dynamic_cast<TrainingHooksUser*>(runner.get())) {
    trainer->UseTrainingHooks(training_hooks);
  }
  return runner;
}

// The peer watch's answer to a lost host. A rank other than 0 ends the job at once (the study is
// rank 0's); rank 0 raises `alarm` for its coordinator thread (EndForLostPeers) and ends the job
// itself once that thread has finished serving, or after 5 s.
[[noreturn]] void EndForLostHost(const LostPeers& lost, bool root, LostPeerAlarm* alarm) {
  if (!root) {
    AbortJob(ExitCode::kPeerLost,
             "no word from rank 0 on " + lost.hosts[0] + " for " +
                 std::to_string(static_cast<int64_t>(lost.silent_s)) +
                 " s (peer_timeout_s): its host is down or cut off; this rank ends, the study "
                 "is rank 0's");
  }
  alarm->Raise(lost);
  for (int waited_ms = 0; alarm->serving() && waited_ms < 5000; waited_ms += 10) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  AbortJob(ExitCode::kPeerLost, LostPeerMessage(lost, alarm->study_path()));
}

// Every objective and its goal: "val_loss (minimize), epoch_time_s (minimize)".
std::string ObjectivesText(const SweepConfig& config) {
  std::string text;
  for (const MetricSpec& objective : config.sweep.objectives) {
    text += (text.empty() ? "" : ", ") + objective.name + " (" + GoalName(objective.goal) + ")";
  }
  return text;
}

// Rank 0, once before the trials start: the sweep in one line.
void PrintSweepBanner(const SweepConfig& config, const GroupLayout& layout, int world_size,
                      const Coordinator& coordinator, const std::string& study_path) {
  std::cout << "hpo-mpi " << HPO_VERSION << ": " << CountOf(world_size, "rank") << " in "
            << CountOf(layout.num_groups, "group") << " of " << config.execution.ranks_per_trial
            << " | task " << config.execution.task << " | " << DescribeSearchAndStopping(config)
            << " | " << CountOf(coordinator.planned_trials(), "trial")
            << (config.execution.epochs == kUnboundedEpochs
                    ? std::string()
                    : " of " + std::to_string(config.execution.epochs) + " epochs")
            << " | " << ObjectivesText(config) << " | study " << study_path << std::endl;
}

// Rank 0's coordinator thread, before every probe for a message: a preemption signal interrupts
// the sweep; a lost host ends the job (EndForLostPeers).
void PollBetweenMessages(Coordinator& coordinator, const LostPeerAlarm& alarm,
                         const GroupLayout& layout, const std::string& study_path) {
  if (PreemptionWatch::Requested() && !coordinator.interrupted()) {
    coordinator.Interrupt("rank 0 received signal " +
                          std::to_string(PreemptionWatch::SignalNumber()));
  }
  if (const std::optional<LostPeers> lost = alarm.lost()) {
    EndForLostPeers(*lost, layout, coordinator, study_path);
  }
}

// Rank 0, once every group is done: the sweep's status (interrupted; or the best trial recorded,
// or why there is none), then the study closed. An I/O error closing the study (its compaction)
// is the status unless a failure came first.
Status FinishSweep(const SweepConfig& config, const SweepOptions& options, TaskRunner& runner,
                   SweepSession& session, const std::string& study_path) {
  const Coordinator& coordinator = session.coordinator();
  Status outcome;
  if (coordinator.interrupted()) {
    outcome = Status::Interrupted(
        "the sweep was interrupted: " + CountOf(coordinator.trials_finished(), "trial") +
        " finished, " + ToContinueFromCheckpoints(coordinator.trials_unfinished()) +
        "; the study is saved in " + study_path + "; continue it with: hpo sweep --config " +
        options.config_path + " --output " + config.execution.output + " --resume");
  } else {
    outcome = RecordBestTrial(config, coordinator, runner, &session.study(), study_path);
    if (outcome.ok() && coordinator.too_many_failures()) {
      outcome = Status::Failure("the sweep was ended: " + coordinator.end_reason() +
                                " (every finished trial is in " + study_path + ")");
    } else if (outcome.ok() && !coordinator.best_trial()) {
      outcome = Status::Failure(NoScoreMessage(config, coordinator, study_path));
    }
  }
  const Status closed = session.study().Close();
  if (outcome.ok() || (!closed.ok() && outcome.code() != Status::Code::kFailure)) {
    outcome = closed;
  }
  return outcome;
}

}  // namespace

Status RunSweep(const SweepOptions& options, const TaskRegistry& registry) {
  const Communicator world = Communicator::World();
  const bool root = world.rank() == 0;
  SweepConfig config;
  HPO_RETURN_IF_ERROR(ShareConfig(world, options, registry, &config));
  // From here on, a rank that stops or whose host goes ends the job (also while data loads).
  std::optional<SweepSession> session;  // made once the layout is known; outlives the watch
  LostPeerAlarm alarm;
  PeerWatch peers(world, config.execution.peer_timeout_s,
                  [&](const LostPeers& lost) { EndForLostHost(lost, root, &alarm); });
  DisarmJobDeadline();
  GroupLayout layout;
  HPO_RETURN_IF_ERROR(
      ComputeGroupLayout(world, static_cast<int>(config.execution.ranks_per_trial), &layout));
  HPO_RETURN_IF_ERROR(PlaceOnDevices(world, config, &layout));
  PreemptionWatch preemption(config.checkpoint.grace_period_s);

  session.emplace(world, layout);
  alarm.SetSession(&*session);
  RootStudy root_study(config, registry.catalog());
  bool finished_before = false;
  Status status;
  if (root) {
    status =
        OpenSweep(config, registry.catalog(), options, &root_study, &*session, &finished_before);
  }
  HPO_RETURN_IF_ERROR(BroadcastStatus(world, status));
  // A finished study, resumed, ends here: no rank loads its data (a restart costs seconds).
  if (!BroadcastString(world, finished_before ? "finished" : "").empty()) {
    return BroadcastStatus(
        world, root ? ReportFinishedStudy(config, *session, root_study.path) : Status::Ok());
  }

  const std::unique_ptr<TaskRunner> runner =
      PrepareRunner(config, layout, registry, options.training_hooks);
  if (root) status = CreateOutput(config, world.size(), &root_study, &*session);
  HPO_RETURN_IF_ERROR(BroadcastStatus(world, status));

  alarm.SetStudyPath(root_study.path);
  if (root) {
    PrintSweepBanner(config, layout, world.size(), session->coordinator(), root_study.path);
    WarnAboutPlainMpirun(layout, world);
  }
  session->Start(
      [&] { PollBetweenMessages(session->coordinator(), alarm, layout, root_study.path); });
  RunGroupTrials(config, layout, *runner, session->control());
  session->Join();
  Status finished;
  if (root) {
    finished = FinishSweep(config, options, *runner, *session, root_study.path);
    root_study.live_report.Finish();
  }
  return BroadcastStatus(world, finished);
}

}  // namespace hpo
