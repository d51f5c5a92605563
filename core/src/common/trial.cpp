#include "hpo/trial.hpp"

namespace hpo {

const char* TrialStatusName(TrialStatus status) {
  switch (status) {
    case TrialStatus::kCompleted:
      return "completed";
    case TrialStatus::kStopped:
      return "stopped";
    case TrialStatus::kFailed:
      return "failed";
    case TrialStatus::kRunning:
      return "running";
    case TrialStatus::kPaused:
      return "paused";
  }
  return "unknown";
}

bool ParseTrialStatus(const std::string& name, TrialStatus* status) {
  for (TrialStatus candidate :
       {TrialStatus::kCompleted, TrialStatus::kStopped, TrialStatus::kFailed, TrialStatus::kRunning,
        TrialStatus::kPaused}) {
    if (name == TrialStatusName(candidate)) {
      *status = candidate;
      return true;
    }
  }
  return false;
}

}  // namespace hpo
