// EndAllDescendants: what a child leaves behind in a session of its own (setsid, a daemon's
// double fork) ends and is reaped. The test process becomes a child subreaper for the rest of
// its life (ctest runs each test in a process of its own).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tasks/command/child_process.hpp"
#include "tasks/command/process_tree.hpp"

namespace hpo {
namespace {

namespace fs = std::filesystem;

bool Exists(pid_t pid) { return fs::exists("/proc/" + std::to_string(pid)); }

class ProcessTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("hpo-process-tree-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    ASSERT_TRUE(BecomeChildSubreaper().ok());
  }
  void TearDown() override {
    for (pid_t pid : left_behind_) kill(pid, SIGKILL);  // whatever a failed test left
    fs::remove_all(dir_);
  }

  // Runs `shell` (which leaves a process behind, its pid in $PID_FILE) until it exits; stops it as
  // a trial ends (its group killed, reaped) and returns the pid it left.
  pid_t RunAndStop(const std::string& shell) {
    const std::string pid_file = (dir_ / "leftover.pid").string();
    ChildSpec spec;
    spec.argv = {"/bin/sh", "-c", shell};
    spec.environment = {"PATH=/usr/bin:/bin", "PID_FILE=" + pid_file};
    std::unique_ptr<ChildProcess> child;
    EXPECT_TRUE(ChildProcess::Start(spec, &child).ok());
    if (child == nullptr) return -1;
    for (int i = 0; i < 1000 && !child->Exited(); ++i) child->Poll(10, nullptr);
    child->Stop(0.1, nullptr);
    std::ifstream in(pid_file);
    pid_t pid = -1;
    in >> pid;
    if (pid > 0) left_behind_.push_back(pid);
    return pid;
  }

  fs::path dir_;
  std::vector<pid_t> left_behind_;
};

// The leftover ignores SIGTERM and sleeps; the program waits for its pid file, then exits.
constexpr char kWaitForPidFile[] = "while [ ! -s \"$PID_FILE\" ]; do sleep 0.01; done; exit 0";

TEST_F(ProcessTreeTest, EndsAndReapsAProcessThatLeftTheGroupBySetsid) {
  const pid_t pid = RunAndStop(
      std::string("setsid sh -c 'trap \"\" TERM; echo $$ > \"$PID_FILE\"; exec sleep 300' & ") +
      kWaitForPidFile);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(Exists(pid));  // the group's SIGKILL missed it
  EndAllDescendants(0.2);
  EXPECT_FALSE(Exists(pid));  // gone, and no zombie left
  EXPECT_TRUE(DescendantsOf(getpid()).empty());
}

TEST_F(ProcessTreeTest, EndsAndReapsADoubleForkedDaemon) {
  const pid_t pid = RunAndStop(
      std::string("(setsid sh -c 'trap \"\" TERM; echo $$ > \"$PID_FILE\"; exec sleep 300' &) ; ") +
      kWaitForPidFile);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(Exists(pid));
  EXPECT_EQ(DescendantsOf(getpid()), std::vector<pid_t>{pid});  // re-parented to the subreaper
  EndAllDescendants(0.2);
  EXPECT_FALSE(Exists(pid));
}

TEST_F(ProcessTreeTest, ReturnsAtOnceWithoutDescendants) {
  const auto start = std::chrono::steady_clock::now();
  EndAllDescendants(5.0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

}  // namespace
}  // namespace hpo
