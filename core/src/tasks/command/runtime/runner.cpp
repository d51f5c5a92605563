// Command trials (W&B `program`/`command`) as a TaskRunner: every rank of a trial group starts one
// child process of the user's program with the torchrun environment, so the group is a ready
// torch.distributed world; the leader reads the metrics from its child's output and reports each
// step to rank 0.
//
// The group's conversation during one trial (point-to-point on the group communicator, so ranks
// watching their children never block in a collective):
//   rank r -> leader  kProgramEnded  r's program ended before the trial did (exit status, stderr)
//   rank r -> leader  kInterrupted   r saw a preemption signal
//   leader -> rank r  kFinish        the trial is over: stop your program (SIGTERM, grace, SIGKILL)
//   rank r -> leader  kFinal         r's program is gone (its exit status and stderr)
// (mpi/group_messages.hpp carries them)
// Every message starts with the trial id, so nothing from one trial is mistaken for the next's.
//
// Nothing a program starts outlives its trial: each rank is a child subreaper
// (tasks/command/process_tree.hpp), so what a program leaves behind (a process that called setsid,
// or double-forked) stays the rank's descendant, and once the program is stopped every descendant
// of the rank is ended. The rank starts no other processes (Open MPI's daemon is the ranks' parent,
// not their child).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/diagnostic.hpp"
#include "common/network_interfaces.hpp"
#include "hpo/config.hpp"
#include "hpo/param.hpp"
#include "hpo/task_runner.hpp"
#include "mpi/control_plane.hpp"
#include "mpi/group_messages.hpp"
#include "platforms/program_platform.hpp"
#include "program/command_line.hpp"
#include "program/metric_reader.hpp"
#include "runtime/preemption.hpp"
#include "runtime/trial_files.hpp"
#include "tasks/builtin_tasks.hpp"
#include "tasks/command/child_process.hpp"
#include "tasks/command/orphan_watch.hpp"
#include "tasks/command/process_tree.hpp"
#include "tasks/command/test_results.hpp"
#include "tasks/command/trainer_checkpoints.hpp"

extern char** environ;

namespace hpo {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// How long a rank waits for its program's output or exit between checks of the group's messages.
constexpr int kLeaderPollMs = 2;
constexpr int kMemberPollMs = 5;
// How often the leader looks at a trial's checkpoint folder while its program saves.
constexpr int kCheckpointPollMs = 50;
// How often the leader looks at the files its program writes metrics to (MetricFeed).
constexpr int kSourcePollMs = 20;
// Once a rank's own program has ended, only messages are left to wait for: a short nap keeps the
// end-of-trial exchange (and so the gap before the next trial) short at little CPU cost.
constexpr useconds_t kEndedNapUs = 200;
constexpr int kHostNameBytes = 256;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A free TCP port on this host for MASTER_PORT (bound to port 0, read back, released; as torchrun
// picks its rendezvous port).
Status PickFreePort(int* port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return Status::Failure("MASTER_PORT: cannot open a socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  close(fd);
  if (!ok) return Status::Failure("MASTER_PORT: cannot bind a free port");
  *port = ntohs(address.sin_port);
  return Status::Ok();
}

// How one rank's program ended, as sent to the leader.
struct EndReport {
  int64_t trial_id = -1;
  int rank = 0;
  bool failed = false;
  std::string
      description;  // "exit status 1" | "killed by signal 9 (SIGKILL)" | why it did not start
  std::string stderr_tail;
};

std::string Encode(const EndReport& report) {
  std::ostringstream out;
  out << report.trial_id << '\n'
      << report.rank << '\n'
      << (report.failed ? 1 : 0) << '\n'
      << report.description << '\n'
      << report.stderr_tail;
  return out.str();
}

EndReport Decode(const std::string& text) {
  EndReport report;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  report.trial_id = std::stoll(line);
  std::getline(in, line);
  report.rank = std::stoi(line);
  std::getline(in, line);
  report.failed = line == "1";
  std::getline(in, report.description);
  std::ostringstream rest;
  rest << in.rdbuf();
  report.stderr_tail = rest.str();
  return report;
}

// The rank's place among the group's hosts (MPI's nodes, as the group layout counts them):
// torchrun's LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK (the host's index in the group) and
// GROUP_WORLD_SIZE, the leader's address and, when the group spans hosts, the interface this rank
// reaches the leader through (for gloo, which otherwise binds to what the host name resolves to).
struct GroupHosts {
  int local_rank = 0;
  int local_world_size = 1;
  int group_rank = 0;
  int group_world_size = 1;
  std::string master_addr = "127.0.0.1";
  std::string socket_interface;
};

// Collective over the group. A group on several hosts meets at the leader's address on the subnet
// most of its ranks share with the leader (the leader's first address when none shares one).
GroupHosts LearnGroupHosts(const GroupLayout& layout) {
  const Communicator& group = layout.group_comm;
  const std::vector<int> nodes = GatherFromEveryRank(group, layout.node_index);
  GroupHosts result;
  std::vector<int> distinct;
  result.local_world_size = 0;
  for (int r = 0; r < group.size(); ++r) {
    if (std::find(distinct.begin(), distinct.end(), nodes[r]) == distinct.end()) {
      distinct.push_back(nodes[r]);
    }
    if (nodes[r] == nodes[group.rank()]) {
      if (r < group.rank()) ++result.local_rank;
      ++result.local_world_size;
    }
  }
  result.group_rank = static_cast<int>(
      std::find(distinct.begin(), distinct.end(), nodes[group.rank()]) - distinct.begin());
  result.group_world_size = static_cast<int>(distinct.size());
  if (distinct.size() == 1) return result;

  const std::vector<InterfaceAddress> mine = LocalIpv4Addresses();
  const std::string text =
      BroadcastString(group, group.rank() == 0 ? EncodeAddresses(mine) : std::string());
  std::vector<InterfaceAddress> leader;
  if (!DecodeAddresses(text, &leader)) {
    AbortJob(ExitCode::kFailure, "command trials: the group leader's addresses did not decode");
  }
  // Every rank but the leader votes for the leader address it shares a subnet with.
  const int vote = group.rank() == 0 ? -1 : FindSharedSubnet(leader, mine, nullptr);
  const std::vector<int> votes = GatherFromEveryRank(group, vote);
  int chosen = -1;
  size_t chosen_votes = 0;
  for (int candidate = 0; candidate < static_cast<int>(leader.size()); ++candidate) {
    const size_t count = static_cast<size_t>(std::count(votes.begin(), votes.end(), candidate));
    if (count > chosen_votes) {
      chosen = candidate;
      chosen_votes = count;
    }
  }
  if (chosen < 0 && !leader.empty()) chosen = 0;
  if (chosen < 0) {
    // The leader has no address but loopback: its host name is all there is.
    char name[kHostNameBytes] = {0};
    gethostname(name, sizeof(name) - 1);
    result.master_addr = BroadcastString(group, name);
    return result;
  }
  result.master_addr = FormatIpv4(leader[static_cast<size_t>(chosen)].address);
  if (group.rank() == 0) {
    result.socket_interface = leader[static_cast<size_t>(chosen)].interface;
  } else {
    FindSharedSubnet({leader[static_cast<size_t>(chosen)]}, mine, &result.socket_interface);
  }
  return result;
}

// HPO_TRIAL_SEED: the trial's 64-bit seed cut to its low 32 bits, which every seeding function
// takes (numpy's np.random.seed wants < 2**32). The seed is a hash, so its low bits vary as much.
uint32_t ProgramSeed(uint64_t seed) { return static_cast<uint32_t>(seed & 0xFFFFFFFFu); }

bool HasVariable(const std::vector<std::string>& environment, const std::string& name) {
  const std::string prefix = name + "=";
  return std::any_of(environment.begin(), environment.end(),
                     [&](const std::string& entry) { return entry.rfind(prefix, 0) == 0; });
}

// Sets NAME=value in `environment`, replacing an earlier value.
void SetVariable(const std::string& name, const std::string& value,
                 std::vector<std::string>* environment) {
  const std::string prefix = name + "=";
  for (std::string& entry : *environment) {
    if (entry.rfind(prefix, 0) == 0) {
      entry = prefix + value;
      return;
    }
  }
  environment->push_back(prefix + value);
}

bool IsMpiLauncherVariable(const std::string& entry) {
  for (const char* prefix : {"OMPI_", "PMIX_", "PMI_"}) {
    if (entry.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// The steps a trial's program has reported, kept beside its logs (OUTPUT/trials/ID/steps.tsv: the
// step number, with "@" and its `epoch` key when it had one, then the study's metrics in order,
// %.17g) so that a trial resumed from its program's own checkpoint keeps the steps from before the
// interruption. When the program reports its first step n (numbered with `epoch`/`step`, or
// counted from 1), the earlier record's steps before n are kept and the rest dropped: a program
// that starts over (a retry, or one that keeps no checkpoint) drops them all. A program that
// reports nothing (it resumed after its last step) keeps them all. Used by the group leader alone.
class StepRecord {
 public:
  StepRecord(std::string path, size_t columns) : path_(std::move(path)) {
    std::ifstream in(path_);
    for (std::string line; std::getline(in, line);) {
      std::istringstream fields(line);
      std::string number;
      fields >> number;
      const size_t at = number.find('@');
      EpochMetrics step;
      step.epoch = std::strtoll(number.c_str(), nullptr, 10);
      const double key =
          at == std::string::npos ? kNoEpochKey : std::strtod(number.c_str() + at + 1, nullptr);
      for (std::string value; fields >> value;)
        step.values.push_back(std::strtod(value.c_str(), nullptr));
      if (fields.eof() && step.epoch >= 1 && step.values.size() == columns) {
        earlier_.push_back(std::move(step));
        earlier_keys_.push_back(key);
      }
    }
  }

  // The `epoch` keys (NaN where none) of the earlier steps up to step `through`, for
  // MetricReader::ContinueFrom.
  std::vector<double> earlier_epoch_keys(
      int64_t through = std::numeric_limits<int64_t>::max()) const {
    std::vector<double> keys;
    for (size_t i = 0; i < earlier_.size() && earlier_[i].epoch <= through; ++i) {
      keys.push_back(earlier_keys_[i]);
    }
    return keys;
  }

  // The number of the last step recorded before this run (0: none), and of the first step this
  // run's program reported (0: none yet).
  int64_t last_earlier_step() const { return earlier_.empty() ? 0 : earlier_.back().epoch; }
  int64_t first_new_step() const { return first_new_step_; }

  // The earlier steps as `curve` when the program reported none (it resumed after its last).
  void KeepEarlierIfNoneAdded(std::vector<EpochMetrics>* curve) const {
    if (!out_.is_open() && !given_up_ && curve->empty()) *curve = earlier_;
  }

  // Appends `step` (its `epoch` key: NaN for none) to `curve`, after the earlier steps it keeps
  // on the first call, and to the record.
  void Add(const EpochMetrics& step, double epoch_key, std::vector<EpochMetrics>* curve) {
    if (first_new_step_ == 0) first_new_step_ = step.epoch;
    if (!out_.is_open() && !given_up_) {
      out_.open(path_, std::ios::trunc);
      if (!out_) GiveUp();
      for (size_t i = 0; i < earlier_.size() && earlier_[i].epoch < step.epoch; ++i) {
        curve->push_back(earlier_[i]);
        Write(earlier_[i], earlier_keys_[i]);
      }
    }
    curve->push_back(step);
    Write(step, epoch_key);
  }

 private:
  static constexpr double kNoEpochKey = std::numeric_limits<double>::quiet_NaN();

  void Write(const EpochMetrics& step, double epoch_key) {
    if (given_up_) return;
    char number[32];
    out_ << step.epoch;
    if (!std::isnan(epoch_key)) {
      std::snprintf(number, sizeof(number), "%.17g", epoch_key);
      out_ << '@' << number;
    }
    for (double value : step.values) {
      std::snprintf(number, sizeof(number), "%.17g", value);
      out_ << '\t' << number;
    }
    out_ << '\n' << std::flush;
    if (!out_) GiveUp();
  }

  // A record that cannot be written (a full disk) stops, with one warning; the trial goes on.
  void GiveUp() {
    PrintDiagnostic("hpo: warning: writing " + path_ + ": " + std::strerror(errno) +
                    "; the trial's later steps are not recorded there");
    given_up_ = true;
    out_.close();
  }

  std::string path_;
  std::vector<EpochMetrics> earlier_;
  std::vector<double> earlier_keys_;  // aligned with earlier_
  std::ofstream out_;
  bool given_up_ = false;
  int64_t first_new_step_ = 0;
};

// Where the leader's metric lines come from during one trial: its program's output, until a file
// the program writes its metrics to (ProgramPlatform::metric_sources) has started, and from then
// on that file alone; with a metrics_file, the file alone from the start.
class MetricFeed {
 public:
  explicit MetricFeed(ProgramPlatform* platform) : platform_(platform) {}

  // The metric lines among the program's output `lines` and the sources' new lines. The sources
  // (files, often on a shared file system) are looked at every kSourcePollMs, not on every pass
  // of the leader's loop (every kLeaderPollMs), and always when `final` (the program has
  // ended). Failure when a source cannot be read (the trial fails with its message).
  Status Collect(const std::vector<OutputLine>& lines, std::vector<std::string>* metric_lines,
                 bool final = false) {
    Status status = Status::Ok();
    std::vector<std::string> file_lines;
    const Clock::time_point now = Clock::now();
    if (final || now - last_poll_ >= std::chrono::milliseconds(kSourcePollMs)) {
      last_poll_ = now;
      for (const std::unique_ptr<MetricSource>& source : platform_->metric_sources) {
        const Status polled = source->Poll(&file_lines);
        if (!polled.ok() && status.ok()) status = polled;
      }
    }
    bool file_route = platform_->output_has_no_metrics;
    for (const std::unique_ptr<MetricSource>& source : platform_->metric_sources) {
      file_route = file_route || source->started();
    }
    if (!file_route) {
      for (const OutputLine& line : lines) metric_lines->push_back(line.text);
    }
    metric_lines->insert(metric_lines->end(), file_lines.begin(), file_lines.end());
    return status;
  }

  // Why a program that reported nothing may have: its metrics file never appeared ("" when the
  // program's output was its route).
  std::string MissingFileMessage() const {
    if (!platform_->output_has_no_metrics) return "";
    for (const std::unique_ptr<MetricSource>& source : platform_->metric_sources) {
      if (!source->started()) {
        return "the program exited without writing its metrics file " + source->path() +
               " (metrics_file: the path in its command or environment is replaced by this one)";
      }
    }
    return "";
  }

 private:
  ProgramPlatform* platform_;
  Clock::time_point last_poll_{};  // the sources' last look
};

class CommandRunner final : public TaskRunner {
 public:
  CommandRunner(const SweepConfig& config, const GroupLayout& layout)
      : config_(config), layout_(layout) {}

  Status Prepare() {
    hosts_ = LearnGroupHosts(layout_);
    for (const ParameterSpec& spec : config_.sweep.parameters) {
      if (spec.boolean) boolean_parameters_.insert(spec.name);
    }
    for (const MetricRegex& definition : config_.command.metric_definitions) {
      definitions_.push_back({definition.name, definition.regex});
    }
    // The watch first: once this rank is a subreaper, the watcher would be its descendant.
    HPO_RETURN_IF_ERROR(OrphanWatch::Start(config_.command.terminate_grace_s, &orphan_watch_));
    HPO_RETURN_IF_ERROR(BecomeChildSubreaper());
    MetricReader probe;
    return MetricReader::Create(config_.metric_names, config_.sweep.metric.name, definitions_,
                                &probe);
  }

  Status RunTrial(const TrialSpec& trial, const TrialContext& context,
                  TrialOutcome* outcome) override {
    const Clock::time_point start = Clock::now();
    const bool leader = layout_.rank_in_group == 0;
    const std::string trial_dir =
        fs::absolute(TrialFolder(context.output, trial.trial_id)).string();
    const std::string checkpoint_dir =
        fs::absolute(CheckpointDir(context.output, trial.trial_id)).string();
    const std::string params_json = (fs::path(trial_dir) / "params.json").string();
    std::vector<CommandArg> args;
    for (const NamedValue& entry : trial.params) {
      args.push_back({entry.name, entry.value, boolean_parameters_.count(entry.name) != 0});
    }
    int port = 0;
    Status prepared = Status::Ok();
    if (leader) {
      prepared =
          PrepareAsLeader(trial.trial_id, trial_dir, checkpoint_dir, params_json, args, &port);
      if (!prepared.ok()) port = -1;
    }
    port = BroadcastFromLeader(layout_.group_comm, port);
    if (port < 0) {
      return leader ? prepared : Status::Failure("the group leader could not prepare the trial");
    }

    ChildSpec spec;
    CommandContext macros{
        config_.command.program, config_.command.interpreter, params_json, nullptr, {}};
    for (const ParameterSpec& parameter : config_.sweep.parameters) {
      if (FindParam(trial.params, parameter.name) == nullptr) {
        macros.absent_parameters.insert(parameter.name);
      }
    }
    spec.argv = ExpandCommand(config_.command.command, args, macros);
    spec.environment = Environment(trial, port, trial_dir, checkpoint_dir, params_json);
    ProgramPlatform platform;
    const ProgramPlatformInput platform_input{trial_dir,
                                              trial.trial_id,
                                              static_cast<int>(trial.attempt),
                                              layout_.rank_in_group,
                                              layout_.group_comm.size(),
                                              layout_.gpu >= 0,
                                              static_cast<int>(config_.execution.threads_per_rank),
                                              args};
    Status started =
        PrepareProgramPlatform(config_, platform_input, spec.environment, &spec.argv, &platform);
    for (const auto& [name, value] : platform.environment)
      SetVariable(name, value, &spec.environment);
    spec.working_dir = platform.working_dir;
    spec.log_path =
        (fs::path(trial_dir) / ("rank-" + std::to_string(layout_.rank_in_group) + ".log")).string();
    std::unique_ptr<ChildProcess> child;
    if (started.ok()) started = ChildProcess::Start(spec, &child);
    if (leader) {
      LeadTrial(trial, context, started, child.get(), start, &platform, outcome);
    } else {
      FollowTrial(trial, started, child.get());
    }
    outcome->duration_s = SecondsSince(start);
    return Status::Ok();
  }

  // The leader's part before the programs start: the trial's folders, its params.json and a free
  // port for the programs' rendezvous. A Trainer checkpoint that a stop cut short is removed, so
  // the program resumes from its last complete one (trainer_checkpoints.hpp).
  static Status PrepareAsLeader(int64_t trial_id, const std::string& trial_dir,
                                const std::string& checkpoint_dir, const std::string& params_json,
                                const std::vector<CommandArg>& args, int* port) {
    std::error_code error;
    fs::create_directories(trial_dir, error);
    if (!error) fs::create_directories(checkpoint_dir, error);
    if (error) {
      return Status::Failure("cannot create " + trial_dir + " or " + checkpoint_dir + ": " +
                             error.message());
    }
    for (const std::string& name : RemoveIncompleteTrainerCheckpoints(checkpoint_dir)) {
      PrintDiagnostic("hpo: note: trial " + std::to_string(trial_id) + ": removed " + name +
                      " from its checkpoints, a save cut short (it has no trainer_state.json); "
                      "its program goes on from the last complete one");
    }
    std::ofstream out(params_json);
    out << PythonJsonDumps(args) << '\n';
    if (!out) return Status::Failure(params_json + ": cannot write");
    return PickFreePort(port);
  }

  // Whether some trial under `trials` left a test_results.json.
  static bool AnyTrialWroteTestResults(const fs::path& trials) {
    std::error_code error;
    for (fs::directory_iterator it(trials, error), end; !error && it != end; it.increment(error)) {
      if (fs::exists(it->path() / kTestResultsFile, error)) return true;
    }
    return false;
  }

  // The program evaluates itself: its best trial's HPO_TRIAL_DIR/test_results.json, if it wrote
  // one, holds the test metrics and tables the study keeps (tasks/command/test_results.hpp). When
  // it wrote none and other trials did (the best was stopped early), a note says so.
  Status EvaluateBest(const TrialResult& best, const std::string& output,
                      BestTrialReport* report) override {
    const std::string model_dir =
        TrialModelDir(config_, TrialFolder(output, best.trial_id).string());
    std::error_code exists_error;
    if (!model_dir.empty() && fs::is_directory(model_dir, exists_error)) {
      report->model_path = fs::absolute(model_dir).string();
    }
    const fs::path file = TrialFolder(output, best.trial_id) / kTestResultsFile;
    std::error_code error;
    if (!fs::exists(file, error)) {
      if (AnyTrialWroteTestResults(fs::path(output) / "trials")) {
        PrintDiagnostic(
            "hpo: note: the best trial, " + std::to_string(best.trial_id) + " (" +
            TrialStatusName(best.status) + "), wrote no " +
            (fs::path("trials") / std::to_string(best.trial_id) / kTestResultsFile).string() +
            " (a trial stopped early never reaches its test), so the study has no "
            "test results; other trials wrote theirs");
      }
      return Status::Ok();
    }
    return ReadTestResults(file.string(), &report->test_metrics, &report->test_tables);
  }

 private:
  enum class Ending { kNone, kCompleted, kStopped, kInterrupted, kFailed };
  // How the leader has decided the trial ends (kNone while it runs); `why` says why it failed.
  struct TrialEnd {
    Ending ending = Ending::kNone;
    std::string why;
    // When the leader read the output that ended the trial (its program saves after that).
    fs::file_time_type read_at = fs::file_time_type::clock::now();
  };

  std::vector<std::string> Environment(const TrialSpec& trial, int port,
                                       const std::string& trial_dir,
                                       const std::string& checkpoint_dir,
                                       const std::string& params_json) const {
    std::vector<std::string> environment;
    bool threads_set = false;
    for (char** entry = environ; *entry != nullptr; ++entry) {
      const std::string text = *entry;
      if (IsMpiLauncherVariable(text)) continue;
      threads_set = threads_set || text.rfind("OMP_NUM_THREADS=", 0) == 0;
      environment.push_back(text);
    }
    const int rank = layout_.rank_in_group;
    const int world = layout_.group_comm.size();
    auto set = [&environment](const std::string& name, const std::string& value) {
      SetVariable(name, value, &environment);
    };
    set("MASTER_ADDR", hosts_.master_addr);
    if (!hosts_.socket_interface.empty() && !HasVariable(environment, "GLOO_SOCKET_IFNAME")) {
      set("GLOO_SOCKET_IFNAME", hosts_.socket_interface);
    }
    set("MASTER_PORT", std::to_string(port));
    set("RANK", std::to_string(rank));
    set("WORLD_SIZE", std::to_string(world));
    set("LOCAL_RANK", std::to_string(hosts_.local_rank));
    set("LOCAL_WORLD_SIZE", std::to_string(hosts_.local_world_size));
    set("GROUP_RANK", std::to_string(hosts_.group_rank));
    set("GROUP_WORLD_SIZE", std::to_string(hosts_.group_world_size));
    set("ROLE_RANK", std::to_string(rank));
    set("ROLE_WORLD_SIZE", std::to_string(world));
    set("TORCHELASTIC_RUN_ID", "hpo-trial-" + std::to_string(trial.trial_id));
    set("TORCHELASTIC_RESTART_COUNT", std::to_string(trial.attempt));
    set("TORCHELASTIC_MAX_RESTARTS", "0");
    set("HPO_TRIAL_ID", std::to_string(trial.trial_id));
    set("HPO_TRIAL_ATTEMPT", std::to_string(trial.attempt));
    set("HPO_TRIAL_SEED", std::to_string(ProgramSeed(trial.seed)));
    set("HPO_TRIAL_DIR", trial_dir);
    set("HPO_CHECKPOINT_DIR", checkpoint_dir);
    set("HPO_PARAMS_JSON", params_json);
    set(kProcessTagVariable, orphan_watch_->tag());
    // Python writes a pipe in blocks: without this a program's metric lines wait for a full
    // buffer, or are lost when it is stopped.
    if (!HasVariable(environment, "PYTHONUNBUFFERED")) set("PYTHONUNBUFFERED", "1");
    if (!threads_set) set("OMP_NUM_THREADS", std::to_string(config_.execution.threads_per_rank));
    if (config_.command.cuda_visible_devices) {
      set("CUDA_VISIBLE_DEVICES",
          std::to_string(layout_.node_local_rank / config_.execution.trials_per_gpu));
    }
    return environment;
  }

  double InterruptGrace() const {
    return std::min(config_.command.terminate_grace_s, 0.5 * config_.checkpoint.grace_period_s);
  }

  // OUTPUT/trials/ID: the trial's HPO_TRIAL_DIR, its logs and steps.tsv.
  static fs::path TrialFolder(const std::string& output, int64_t trial_id) {
    return fs::path(output) / "trials" / std::to_string(trial_id);
  }

  static std::string StepsPath(const std::string& output, int64_t trial_id) {
    return (TrialFolder(output, trial_id) / "steps.tsv").string();
  }

  // The `epoch` keys of the steps before this run's: its own record's, or for a PBT child yet to
  // report, its parent's up to the checkpoint it copied (a Trainer child goes on from there).
  std::vector<double> EarlierEpochKeys(const TrialSpec& trial, const TrialContext& context,
                                       const StepRecord& record) const {
    if (trial.parent_trial < 0 || record.last_earlier_step() != 0) {
      return record.earlier_epoch_keys();
    }
    const StepRecord parent(StepsPath(context.output, trial.parent_trial),
                            config_.metric_names.size());
    return parent.earlier_epoch_keys(trial.parent_epoch);
  }

  // The leader: reads metrics, reports steps, watches every rank's program, decides the ending.
  void LeadTrial(const TrialSpec& trial, const TrialContext& context, const Status& started,
                 ChildProcess* child, Clock::time_point start, ProgramPlatform* platform,
                 TrialOutcome* outcome) {
    MetricReader reader;
    MetricReader::Create(config_.metric_names, config_.sweep.metric.name, definitions_, &reader);
    StepRecord record(StepsPath(context.output, trial.trial_id), config_.metric_names.size());
    reader.ContinueFrom(EarlierEpochKeys(trial, context, record));
    MetricFeed feed(platform);
    restart_checked_ = restarted_ = false;
    restarted_note_.clear();
    TrialEnd end;
    if (!started.ok()) {
      end = {Ending::kFailed, "rank 0: " + started.message()};
    } else {
      end = WatchTrial(trial, context, child, start, &feed, &reader, &record, &outcome->curve);
    }
    std::vector<OutputLine> last_lines;
    if (end.ending == Ending::kStopped || end.ending == Ending::kInterrupted) {
      AwaitCheckpointSave(CheckpointDir(context.output, trial.trial_id), end, child, &last_lines);
    }
    FinishTrial(trial, child, &end, &last_lines);
    // Steps the program printed after the verdict that ended the trial, while it was stopped (a
    // pause lets it run until SIGTERM, and its checkpoint keeps what it trained): the curve's,
    // not reported (the ending is decided).
    std::vector<std::string> late_lines;
    const Status late = feed.Collect(last_lines, &late_lines, /*final=*/true);
    if (!late.ok() && end.ending == Ending::kCompleted) end = {Ending::kFailed, late.message()};
    std::vector<EpochMetrics> late_steps;
    for (const std::string& line : late_lines) reader.ReadLine(line, &late_steps);
    for (const EpochMetrics& step : late_steps) {
      record.Add(step, reader.epoch_key(step.epoch), &outcome->curve);
    }
    record.KeepEarlierIfNoneAdded(&outcome->curve);
    if (end.ending == Ending::kCompleted && outcome->curve.empty()) {
      const std::string missing = feed.MissingFileMessage();
      if (!missing.empty()) end = {Ending::kFailed, missing};
    }
    WarnUndeclared(reader);
    WarnUnreadable(reader, trial.trial_id);
    SetOutcome(trial, end, outcome);
    if (restarted_ && outcome->message.empty()) outcome->message = restarted_note_;
  }

  // Until the trial ends: the leader's program's steps reported, the other ranks' messages read,
  // the programs' exits, a preemption and the trial's time limit watched.
  TrialEnd WatchTrial(const TrialSpec& trial, const TrialContext& context, ChildProcess* child,
                      Clock::time_point start, MetricFeed* feed, MetricReader* reader,
                      StepRecord* record, std::vector<EpochMetrics>* curve) {
    const Communicator& group = layout_.group_comm;
    TrialEnd end;
    int others_ended = 0;
    bool own_ended = false;
    std::vector<OutputLine> lines;
    std::vector<std::string> metric_lines;
    while (end.ending == Ending::kNone) {
      lines.clear();
      metric_lines.clear();
      end.read_at = fs::file_time_type::clock::now();
      if (own_ended) {
        usleep(kEndedNapUs);
      } else {
        child->Poll(kLeaderPollMs, &lines);
      }
      const Status fed = feed->Collect(lines, &metric_lines);
      end.ending = ReportSteps(trial, context, metric_lines, reader, record, curve);
      if (const std::string restart = CheckRestart(trial, *record); !restart.empty()) {
        end = {Ending::kFailed, restart};
        break;
      }
      if (end.ending != Ending::kNone) break;
      if (!fed.ok()) {
        end = {Ending::kFailed, fed.message()};
        break;
      }
      others_ended += ReceiveRankMessages(trial, &end);
      if (end.ending != Ending::kNone) break;
      if (!own_ended && child->Exited()) {
        own_ended = true;
        const ChildExit& exit = child->exit();
        if (!exit.exited || exit.exit_code != 0) {
          end = {Ending::kFailed,
                 Describe({trial.trial_id, 0, true, exit.Describe(), child->StderrTail()})};
          break;
        }
      }
      if (own_ended && others_ended == group.size() - 1) {
        end.ending = Ending::kCompleted;
      } else if (PreemptionWatch::Requested()) {
        end.ending = Ending::kInterrupted;
      } else if (config_.command.trial_timeout_s &&
                 SecondsSince(start) > *config_.command.trial_timeout_s) {
        end = {Ending::kFailed, "timed out after " +
                                    std::to_string(*config_.command.trial_timeout_s) +
                                    " s (trial_timeout_s); its programs were stopped"};
      }
    }
    return end;
  }

  // Reads the steps in the metric `lines`, records them and reports each to rank 0 until a
  // verdict ends the trial: steps after it (a fast program that printed past a pause or a stop
  // before its SIGTERM) are the curve's, not reported, as steps printed while it is stopped.
  // Returns kStopped or kInterrupted when a verdict says so (the first such one), else kNone.
  Ending ReportSteps(const TrialSpec& trial, const TrialContext& context,
                     const std::vector<std::string>& lines, MetricReader* reader,
                     StepRecord* record, std::vector<EpochMetrics>* curve) {
    Ending ending = Ending::kNone;
    std::vector<EpochMetrics> steps;
    for (const std::string& line : lines) reader->ReadLine(line, &steps);
    for (const EpochMetrics& step : steps) {
      record->Add(step, reader->epoch_key(step.epoch), curve);
      if (ending != Ending::kNone) continue;
      const EpochVerdict verdict = context.gate.ReportFromLeader(trial.trial_id, step);
      if (verdict == EpochVerdict::kInterrupt && ending == Ending::kNone) {
        ending = Ending::kInterrupted;
      } else if (verdict == EpochVerdict::kStop && ending == Ending::kNone) {
        ending = Ending::kStopped;
      }
    }
    return ending;
  }

  // Reads the other ranks' waiting messages about this trial: a failed program fails it, a
  // preemption signal interrupts it. Returns how many of their programs ended.
  int ReceiveRankMessages(const TrialSpec& trial, TrialEnd* end) {
    const Communicator& group = layout_.group_comm;
    int ended = 0;
    int source = 0;
    while (std::optional<std::string> text =
               TryReceiveText(group, GroupMessage::kProgramEnded, &source)) {
      const EndReport report = Decode(*text);
      if (report.trial_id != trial.trial_id) continue;
      ++ended;
      if (report.failed && end->ending == Ending::kNone) {
        *end = {Ending::kFailed, Describe(report)};
      }
    }
    while (std::optional<std::string> text =
               TryReceiveText(group, GroupMessage::kInterrupted, &source)) {
      if (std::stoll(*text) == trial.trial_id && end->ending == Ending::kNone) {
        end->ending = Ending::kInterrupted;
      }
    }
    return ended;
  }

  // How long the programs of a trial ending this way get after SIGTERM (and to finish a save).
  double StopGrace(Ending ending) const {
    return ending == Ending::kInterrupted ? InterruptGrace() : config_.command.terminate_grace_s;
  }

  // Before a paused or interrupted trial's programs are stopped: lets a Trainer program finish the
  // checkpoint of the step it just reported (trainer_checkpoints.hpp), up to the stop's grace (an
  // interrupt's once preemption is requested), the leader's program's output meanwhile in `lines`.
  // The other ranks' programs run on until then: Trainer's save gathers from every rank.
  void AwaitCheckpointSave(const std::string& folder, const TrialEnd& end, ChildProcess* child,
                           std::vector<OutputLine>* lines) const {
    const Clock::time_point start = Clock::now();
    while (child != nullptr && !child->Exited()) {
      const double waited = SecondsSince(start);
      const double limit =
          PreemptionWatch::Requested() ? StopGrace(Ending::kInterrupted) : StopGrace(end.ending);
      if (waited >= limit ||
          CheckpointSettled(ScanCheckpointFolder(folder, end.read_at), waited, restarted_)) {
        return;
      }
      child->Poll(kCheckpointPollMs, lines);
    }
  }

  // Tells the other ranks the trial is over, stops the leader's program (its output until then in
  // `last_lines`) and collects the others' final reports (a failed one fails a trial that had
  // completed); drops any messages left.
  void FinishTrial(const TrialSpec& trial, ChildProcess* child, TrialEnd* end,
                   std::vector<OutputLine>* last_lines) {
    const Communicator& group = layout_.group_comm;
    const std::string finish = std::to_string(trial.trial_id);
    for (int r = 1; r < group.size(); ++r) SendText(group, r, GroupMessage::kFinish, finish);
    StopProgram(child, StopGrace(end->ending), last_lines);
    for (int r = 1; r < group.size(); ++r) {
      const EndReport report = Decode(ReceiveText(group, r, GroupMessage::kFinal));
      if (end->ending == Ending::kCompleted && report.failed) {
        *end = {Ending::kFailed, Describe(report)};
      }
    }
    int source = 0;
    while (TryReceiveText(group, GroupMessage::kProgramEnded, &source) ||
           TryReceiveText(group, GroupMessage::kInterrupted, &source)) {
    }
  }

  // The trial's status and message from how it ended.
  void SetOutcome(const TrialSpec& trial, const TrialEnd& end, TrialOutcome* outcome) const {
    const std::string last_step = outcome->curve.empty()
                                      ? std::string("before its first step")
                                      : "after step " + std::to_string(outcome->curve.back().epoch);
    switch (end.ending) {
      case Ending::kCompleted:
        if (outcome->curve.empty()) {
          outcome->status = TrialStatus::kFailed;
          outcome->message = "the program exited without reporting " + config_.sweep.metric.name +
                             " (its output is in trials/" + std::to_string(trial.trial_id) +
                             "/rank-0.log)";
        } else {
          outcome->status = TrialStatus::kCompleted;
        }
        break;
      case Ending::kStopped:
        outcome->status = TrialStatus::kStopped;
        outcome->message = "stopped by scheduler " + last_step;
        break;
      case Ending::kInterrupted:
        outcome->status = TrialStatus::kRunning;
        outcome->message = "interrupted " + last_step + "; its programs got SIGTERM";
        break;
      case Ending::kFailed:
      case Ending::kNone:
        outcome->status = TrialStatus::kFailed;
        outcome->message = end.why;
        break;
    }
  }

  // Every other rank: runs its program until the leader says the trial is over.
  void FollowTrial(const TrialSpec& trial, const Status& started, ChildProcess* child) {
    const Communicator& group = layout_.group_comm;
    const int rank = layout_.rank_in_group;
    bool ended_sent = false;
    bool interrupt_sent = false;
    EndReport report{trial.trial_id, rank, false, "", ""};
    if (!started.ok()) {
      report.failed = true;
      report.description = started.message();
      SendText(group, 0, GroupMessage::kProgramEnded, Encode(report));
      ended_sent = true;
    }
    std::vector<OutputLine> lines;
    for (;;) {
      if (MessageWaiting(group, 0, GroupMessage::kFinish)) {
        const std::string text = ReceiveText(group, 0, GroupMessage::kFinish);
        if (std::stoll(text) == trial.trial_id) break;
        continue;
      }
      if (child != nullptr && !ended_sent) {
        lines.clear();
        child->Poll(kMemberPollMs, &lines);
        if (child->Exited()) {
          report =
              EndReport{trial.trial_id, rank, false, child->exit().Describe(), child->StderrTail()};
          report.failed = !child->exit().exited || child->exit().exit_code != 0;
          SendText(group, 0, GroupMessage::kProgramEnded, Encode(report));
          ended_sent = true;
        }
      } else {
        usleep(kEndedNapUs);
      }
      if (!interrupt_sent && PreemptionWatch::Requested()) {
        SendText(group, 0, GroupMessage::kInterrupted, std::to_string(trial.trial_id));
        interrupt_sent = true;
      }
    }
    lines.clear();
    StopProgram(child, config_.command.terminate_grace_s, &lines);
    if (child != nullptr && !ended_sent) {
      report =
          EndReport{trial.trial_id, rank, false, child->exit().Describe(), child->StderrTail()};
    }
    SendText(group, 0, GroupMessage::kFinal, Encode(report));
  }

  // Stops the rank's program (when it started), then ends whatever it left behind.
  static void StopProgram(ChildProcess* child, double grace_s, std::vector<OutputLine>* lines) {
    if (child != nullptr) child->Stop(grace_s, lines);
    EndAllDescendants(grace_s);
  }

  // "rank R: WHY", then the last lines of its stderr (whose end, a Python program's exception
  // line, says what went wrong) one per line.
  static std::string Describe(const EndReport& report) {
    const std::string text = "rank " + std::to_string(report.rank) + ": " + report.description;
    if (report.stderr_tail.empty()) return text;
    return text + "; its stderr ends:\n" + report.stderr_tail;
  }

  // Whether the program started over instead of from the checkpoint it was given (a PBT child
  // from its parent's at parent_epoch; a trial resumed after a pause, a preemption or a retry from
  // its own), seen from its first step: 1 where a later one was due. Checked once per run, at its
  // first step; the trial's message then says `restarted` (rank 0 warns once per sweep). Returns
  // why the trial fails under `pbt.strict`, else "".
  std::string CheckRestart(const TrialSpec& trial, const StepRecord& record) {
    if (restart_checked_ || record.first_new_step() == 0) return "";
    restart_checked_ = true;
    const bool child = trial.parent_trial >= 0 && record.last_earlier_step() == 0;
    const int64_t due = child ? trial.parent_epoch + 1 : record.last_earlier_step() + 1;
    restarted_ = due > 1 && record.first_new_step() == 1;
    if (!restarted_) return "";
    const std::string from = child ? "trial " + std::to_string(trial.parent_trial) +
                                         "'s checkpoint at epoch " +
                                         std::to_string(trial.parent_epoch)
                                   : "its own checkpoint at epoch " + std::to_string(due - 1);
    restarted_note_ = "restarted: its program reported step 1 first, not " + std::to_string(due) +
                      " (it was to start from " + from + ")";
    if (config_.pbt.enabled && config_.pbt.strict) {
      return restarted_note_ +
             "; a PBT program loads HPO_CHECKPOINT_DIR and reports the "
             "checkpoint's epoch + 1 next (pbt.strict)";
    }
    return "";
  }

  // Said once per sweep, by the first group's leader (every group runs the same program), not
  // once per group.
  void WarnUndeclared(const MetricReader& reader) {
    if (layout_.group != 0) return;
    std::string names;
    for (const std::string& name : reader.undeclared()) {
      if (warned_.insert(name).second) names += (names.empty() ? "" : ", ") + name;
    }
    if (!names.empty()) {
      PrintDiagnostic("hpo: note: the program reports metrics the study does not record: " + names +
                      " (list them under `metrics:` beside `sweep:` to keep them)");
    }
  }

  // Once per group leader: a line that looks like a metrics dict but could not be read may hold
  // the objective, so it is never dropped in silence.
  void WarnUnreadable(const MetricReader& reader, int64_t trial_id) {
    if (reader.unreadable_lines() == 0 || warned_unreadable_) return;
    warned_unreadable_ = true;
    const MetricReader::UnreadableLine& first = reader.first_unreadable();
    const std::string trial = std::to_string(trial_id);
    PrintDiagnostic("hpo: warning: trial " + trial + ": " +
                    std::to_string(reader.unreadable_lines()) +
                    " output line(s) look like a metrics dict but could not be read (" + first.why +
                    "), the first, line " + std::to_string(first.line) + " of its output (trials/" +
                    trial + "/rank-0.log): " + first.text +
                    "; print metrics as JSON (json.dumps) or a Python dict of numbers");
  }

  const SweepConfig& config_;
  const GroupLayout& layout_;
  GroupHosts hosts_;
  std::set<std::string> boolean_parameters_;
  std::vector<MetricDefinition> definitions_;
  std::set<std::string> warned_;
  bool warned_unreadable_ = false;
  // CheckRestart's state, per run (reset by LeadTrial).
  bool restart_checked_ = false;
  bool restarted_ = false;
  std::string restarted_note_;
  // Ends the programs' processes if this rank dies without ending them (Prepare starts it).
  std::unique_ptr<OrphanWatch> orphan_watch_;
};

// Collective over the group (the ranks learn each other's hosts).
Status MakeCommandRunner(const SweepConfig& config, const GroupLayout& layout,
                         std::unique_ptr<TaskRunner>* runner) {
  auto command = std::make_unique<CommandRunner>(config, layout);
  HPO_RETURN_IF_ERROR(command->Prepare());
  *runner = std::move(command);
  return Status::Ok();
}

}  // namespace

namespace tasks::command {

void Register(TaskRegistry* registry) { registry->Add(Describe(), MakeCommandRunner); }

}  // namespace tasks::command
}  // namespace hpo
