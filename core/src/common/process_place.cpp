#include "common/process_place.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace hpo {

namespace {

// The first line of a /proc file; empty when it cannot be read.
std::string FirstLineOf(const std::string& path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  return line;
}

// The inode of a namespace link (/proc/self/ns/net...); empty when it cannot be read.
std::string NamespaceInode(const std::string& path) {
  struct stat status;
  if (::stat(path.c_str(), &status) != 0) return "";
  return std::to_string(status.st_dev) + ":" + std::to_string(status.st_ino);
}

// The fields of /proc/PID/stat after the command name (from the state on: "S 1 ..."); empty when
// the process is gone. The name, in parentheses, may hold spaces and parentheses itself.
std::vector<std::string> StatFieldsAfterName(int64_t pid) {
  const std::string line = FirstLineOf("/proc/" + std::to_string(pid) + "/stat");
  const size_t name_end = line.rfind(')');
  if (name_end == std::string::npos) return {};
  std::istringstream rest(line.substr(name_end + 1));
  std::vector<std::string> fields;
  for (std::string field; rest >> field;) fields.push_back(field);
  return fields;
}

// proc(5): the state is field 3 of /proc/PID/stat, the start time field 22.
constexpr size_t kStatStateIndex = 0;
constexpr size_t kStatStartTimeIndex = 22 - 3;

}  // namespace

ProcessPlace PlaceOf(int64_t pid) {
  ProcessPlace place;
  place.pid = pid;
  const std::string proc = "/proc/" + std::to_string(pid);
  const std::vector<std::string> fields = StatFieldsAfterName(pid);
  const std::string boot_id = FirstLineOf("/proc/sys/kernel/random/boot_id");
  const std::string net = NamespaceInode(proc + "/ns/net");
  const std::string pids = NamespaceInode(proc + "/ns/pid");
  if (fields.size() <= kStatStartTimeIndex || boot_id.empty() || net.empty() || pids.empty()) {
    return place;
  }
  place.start_ticks = std::stoll(fields[kStatStartTimeIndex]);
  place.machine = boot_id + " " + net + " " + pids;
  return place;
}

ProcessPlace ThisProcessPlace() { return PlaceOf(static_cast<int64_t>(::getpid())); }

ProcessState StateOf(const ProcessPlace& place) {
  const std::vector<std::string> fields = StatFieldsAfterName(place.pid);
  if (fields.size() <= kStatStartTimeIndex ||
      fields[kStatStartTimeIndex] != std::to_string(place.start_ticks)) {
    return ProcessState::kGone;
  }
  const char state = fields[kStatStateIndex].empty() ? 'X' : fields[kStatStateIndex][0];
  if (state == 'Z' || state == 'X' || state == 'x') return ProcessState::kGone;
  if (state == 'T' || state == 't') return ProcessState::kStopped;
  return ProcessState::kRunning;
}

}  // namespace hpo
