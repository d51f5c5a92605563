#include "tasks/command/process_tree.hpp"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>

namespace hpo {

namespace {

using Clock = std::chrono::steady_clock;

// How often the end of the descendants is looked for.
constexpr std::chrono::milliseconds kCheckInterval{10};
// How long SIGKILLed descendants get to be gone (the kernel ends them at once; this bounds the
// wait for ones that fork faster than the rounds find them).
constexpr double kKillWaitS = 5.0;

// The parent pid in /proc/PID/stat ("PID (COMM) STATE PPID ..."; COMM may hold spaces and ')'),
// or -1 when the process is gone.
pid_t ParentOf(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string text;
  std::getline(in, text);
  const size_t comm_end = text.rfind(')');
  if (comm_end == std::string::npos) return -1;
  std::istringstream fields(text.substr(comm_end + 1));
  std::string state;
  pid_t parent = -1;
  fields >> state >> parent;
  return fields ? parent : -1;
}

// Every process's children, from /proc.
std::map<pid_t, std::vector<pid_t>> ChildrenByParent() {
  std::map<pid_t, std::vector<pid_t>> children;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return children;
  while (const dirent* entry = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0') continue;  // not a process
    const pid_t parent = ParentOf(entry->d_name);
    if (parent > 0) children[parent].push_back(static_cast<pid_t>(pid));
  }
  closedir(proc);
  return children;
}

// Reaps those of `processes` that are this process's children and have exited; returns the rest.
std::vector<pid_t> ReapExited(const std::vector<pid_t>& processes) {
  std::vector<pid_t> left;
  for (const pid_t pid : processes) {
    pid_t reaped;
    do {
      reaped = waitpid(pid, nullptr, WNOHANG);
    } while (reaped < 0 && errno == EINTR);
    if (reaped != pid) left.push_back(pid);  // running, or not this process's child (ECHILD)
  }
  return left;
}

// Sends `signal` once to each descendant of this process (those that appear meanwhile included)
// and reaps them as they exit, until none is left (true) or `seconds` have passed (false).
bool SignalDescendantsAndWait(int signal, double seconds) {
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(std::max(seconds, 0.0)));
  std::set<pid_t> signalled;
  for (;;) {
    const std::vector<pid_t> left = ReapExited(DescendantsOf(getpid()));
    if (left.empty()) return true;
    for (const pid_t pid : left) {
      if (signalled.insert(pid).second) kill(pid, signal);
    }
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kCheckInterval);
  }
}

}  // namespace

Status BecomeChildSubreaper() {
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    return Status::Failure(std::string("cannot become a child subreaper: ") + strerror(errno));
  }
  return Status::Ok();
}

std::vector<pid_t> DescendantsOf(pid_t ancestor) {
  const std::map<pid_t, std::vector<pid_t>> children = ChildrenByParent();
  std::vector<pid_t> descendants;
  std::vector<pid_t> parents = {ancestor};
  while (!parents.empty()) {
    const pid_t parent = parents.back();
    parents.pop_back();
    const auto found = children.find(parent);
    if (found == children.end()) continue;
    for (const pid_t child : found->second) {
      descendants.push_back(child);
      parents.push_back(child);
    }
  }
  return descendants;
}

void EndAllDescendants(double grace_s) {
  if (SignalDescendantsAndWait(SIGTERM, grace_s)) return;
  SignalDescendantsAndWait(SIGKILL, kKillWaitS);
}

}  // namespace hpo
