#include "coord/sweep_status.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "common/count_text.hpp"
#include "common/duration_text.hpp"
#include "coord/coordinator.hpp"
#include "hpo/config.hpp"
#include "search/searcher.hpp"
#include "study/study_file.hpp"

namespace hpo {

namespace {

// Whether another process holds STUDY.h5.lock (a sweep writing the study). The test takes a
// shared lock without waiting and drops it at once.
bool HeldByAWriter(const std::string& study_path) {
  const int fd = ::open((study_path + ".lock").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return held;
}

bool Better(const std::string& goal, double a, double b) {
  return goal == "maximize" ? a > b : a < b;
}

// A sweep creating its study claims the path with an empty file and replaces it with the first
// build milliseconds later (StudyWriter::Create): a status asked then waits for that (2 s at most)
// rather than call the file not HDF5.
void WaitWhileTheStudyIsCreated(const std::string& study_path) {
  for (int waited_ms = 0; waited_ms < 2000; waited_ms += 20) {
    std::error_code error;
    if (std::filesystem::file_size(study_path, error) != 0 || error) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

Status ReadInFlightTrials(const StudyContents& study, std::vector<SweepStatus::InFlight>* trials) {
  trials->clear();
  std::map<int64_t, TrialSpec> running;
  std::map<int64_t, std::map<int64_t, double>> reports;
  HPO_RETURN_IF_ERROR(Coordinator::ReadRunningTrials(study, &running, &reports));
  for (const auto& [id, spec] : running) {
    SweepStatus::InFlight trial{id, 0, 0.0};
    const auto found = reports.find(id);
    if (found != reports.end() && !found->second.empty()) {
      trial.epoch = found->second.rbegin()->first;
      trial.objective = found->second.rbegin()->second;
    }
    trials->push_back(trial);
  }
  return Status::Ok();
}

Status ReadSweepStatus(const std::string& path, const TaskCatalog& catalog, SweepStatus* status) {
  SweepStatus read;
  read.study_path = StudyPathOf(path);
  WaitWhileTheStudyIsCreated(read.study_path);
  read.running = HeldByAWriter(read.study_path);
  StudyContents study;
  HPO_RETURN_IF_ERROR(ReadStudy(read.study_path, &study));
  read.metric = study.attributes.metric_name;
  read.goal = study.attributes.metric_goal;
  double total_duration = 0.0;
  for (const TrialResult& trial : study.trials) {
    switch (trial.status) {
      case TrialStatus::kCompleted:
        ++read.completed;
        if (std::isfinite(trial.objective) &&
            (!read.best || Better(read.goal, trial.objective, read.best->objective))) {
          read.best = trial;
        }
        break;
      case TrialStatus::kStopped:
        ++read.stopped;
        break;
      case TrialStatus::kFailed:
        ++read.failed;
        break;
      case TrialStatus::kPaused:
        ++read.paused;
        break;
      case TrialStatus::kRunning:
        continue;
    }
    total_duration += trial.duration_s;
  }
  for (const auto& [id, spans] : study.earlier_spans) {
    for (const RunSpan& span : spans) total_duration += span.duration_s;
  }
  const int64_t started = read.completed + read.stopped + read.failed + read.paused;
  if (started > 0) read.mean_duration_s = total_duration / static_cast<double>(started);
  read.ended = study.extra_attributes.count("best_trial_id") != 0;
  HPO_RETURN_IF_ERROR(ReadInFlightTrials(study, &read.in_flight).WithContext(read.study_path));
  SweepConfig config;
  if (ParseStoredConfig(study.attributes.config, catalog, &config).ok()) {
    std::unique_ptr<Searcher> searcher;
    if (MakeSearcher(config, &searcher).ok()) {
      const std::optional<int64_t> space = searcher->SpaceSize();
      if (config.sweep.run_cap || space) read.planned = PlannedTrialCount(config, space);
    }
    if (study.attributes.world_size > 0 && config.execution.ranks_per_trial > 0) {
      read.groups = study.attributes.world_size / config.execution.ranks_per_trial;
    }
  }
  *status = std::move(read);
  return Status::Ok();
}

std::string FormatSweepStatus(const SweepStatus& status) {
  std::ostringstream out;
  const int64_t finished = status.completed + status.stopped + status.failed;
  out << "study: " << status.study_path << " ("
      << (status.running ? "a sweep is running it; figures as of its last publish"
                         : "no sweep is running it")
      << ")\n";
  out << "trials: " << finished;
  if (status.planned) out << " of " << *status.planned;
  out << " finished (" << status.completed << " completed, " << status.stopped << " stopped, "
      << status.failed << " failed)";
  if (status.running) out << ", " << status.in_flight.size() << " running";
  out << ", " << status.paused << " paused\n";
  if (!status.in_flight.empty()) {
    out << (status.running ? "running:" : "interrupted, to go on from checkpoints on resume:");
    for (const SweepStatus::InFlight& trial : status.in_flight) {
      out << (&trial == &status.in_flight.front() ? " trial " : ", trial ") << trial.trial_id;
      if (trial.epoch > 0) {
        out << " (epoch " << trial.epoch << ", " << status.metric << ' ' << trial.objective << ')';
      } else {
        out << " (no epoch yet)";
      }
    }
    out << '\n';
  }
  if (status.best) {
    out << "best: trial " << status.best->trial_id << ", " << status.metric << ' '
        << status.best->objective << " (";
    for (size_t i = 0; i < status.best->params.size(); ++i) {
      out << (i ? " " : "") << status.best->params[i].name << '='
          << FormatParamValue(status.best->params[i].value);
    }
    out << ")\n";
  } else {
    out << "best: none yet\n";
  }
  if (!status.running) {
    if (status.ended || (status.planned && finished >= *status.planned)) {
      out << "state: finished";
      if (status.paused > 0) out << " (" << status.paused << " left paused)";
      out << "\n";
    } else {
      out << "state: not running";
      if (status.planned) out << ", " << CountOf(*status.planned - finished, "trial") << " left";
      out << " (resume it with hpo sweep --resume)\n";
    }
  } else if (status.planned && status.groups > 0 && finished + status.paused > 0) {
    // Paused trials have had their run so far; the cost per trial is what the trials that ran
    // took on average, pauses and promotions included, so early stopping's savings count.
    const int64_t left = std::max<int64_t>(0, *status.planned - finished - status.paused);
    out << "state: running, ~"
        << FormatDuration(static_cast<double>(left) * status.mean_duration_s /
                          static_cast<double>(status.groups))
        << " left (" << CountOf(left, "trial") << " at " << FormatDuration(status.mean_duration_s)
        << " each on " << CountOf(status.groups, "group") << ")\n";
  } else {
    out << "state: running\n";
  }
  return out.str();
}

}  // namespace hpo
