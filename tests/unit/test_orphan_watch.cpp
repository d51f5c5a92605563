// OrphanWatch: when the process holding the watch (a rank) dies without saying that nothing is
// left, the watcher ends every process whose environment holds the watch's tag, even one in a
// session of its own that ignores SIGTERM; when the holder ends normally, it leaves them alone.
// Each case forks the "rank", so that it can die; the test process itself holds no watch.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>

#include "tasks/command/orphan_watch.hpp"

namespace hpo {
namespace {

namespace fs = std::filesystem;

// Whether `pid` runs (a zombie, or no process, does not).
bool Alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(in, text);
  const size_t comm_end = text.rfind(')');
  return comm_end != std::string::npos && text.size() > comm_end + 2 && text[comm_end + 2] != 'Z';
}

// Whether some process's command line holds `text` (the watcher's holds its tag).
bool CommandLineHolds(const std::string& text) {
  for (const fs::directory_entry& entry : fs::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "cmdline");
    const std::string line((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

template <typename Predicate>
bool WaitFor(Predicate done, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

class OrphanWatchTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (sleeper_ > 0) kill(sleeper_, SIGKILL);
  }

  // Forks a rank that starts a watch (grace 0.2 s) and a tagged `sleep 300` in a session of its
  // own that ignores SIGTERM, then ends: by _exit alone (dies) or after destroying its watch
  // (`say_done`). Sets sleeper_ and tag_.
  void RunRank(bool say_done) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t rank = fork();
    ASSERT_GE(rank, 0);
    if (rank == 0) {
      close(fds[0]);
      std::unique_ptr<OrphanWatch> watch;
      if (!OrphanWatch::Start(0.2, &watch).ok()) _exit(2);
      const std::string tag = watch->tag();
      const std::string entry = std::string(kProcessTagVariable) + "=" + tag;
      const pid_t sleeper = fork();
      if (sleeper == 0) {
        setsid();
        signal(SIGTERM, SIG_IGN);
        char* const argv[] = {const_cast<char*>("sleep"), const_cast<char*>("300"), nullptr};
        char* const envp[] = {const_cast<char*>(entry.c_str()), nullptr};
        execve("/bin/sleep", argv, envp);
        _exit(127);
      }
      const std::string said = std::to_string(sleeper) + " " + tag;
      if (write(fds[1], said.c_str(), said.size()) != static_cast<ssize_t>(said.size())) _exit(3);
      if (say_done) watch.reset();
      _exit(0);
    }
    close(fds[1]);
    char buffer[128] = {};
    const ssize_t got = read(fds[0], buffer, sizeof(buffer) - 1);
    close(fds[0]);
    int status = 0;
    ASSERT_EQ(waitpid(rank, &status, 0), rank);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    ASSERT_GT(got, 0);
    const std::string said(buffer, static_cast<size_t>(got));
    sleeper_ = std::stoi(said.substr(0, said.find(' ')));
    tag_ = said.substr(said.find(' ') + 1);
  }

  pid_t sleeper_ = -1;
  std::string tag_;
};

TEST_F(OrphanWatchTest, WhenTheRankDiesItsTaggedProcessesEnd) {
  RunRank(/*say_done=*/false);
  EXPECT_TRUE(WaitFor([this] { return !Alive(sleeper_); }, std::chrono::seconds(60)))
      << "the tagged process " << sleeper_ << " outlived its rank";
  EXPECT_TRUE(WaitFor([this] { return !CommandLineHolds(tag_); }, std::chrono::seconds(60)))
      << "the watcher did not exit";
}

TEST_F(OrphanWatchTest, WhenTheRankEndsNormallyTheWatcherLeavesThemAlone) {
  RunRank(/*say_done=*/true);
  ASSERT_TRUE(WaitFor([this] { return !CommandLineHolds(tag_); }, std::chrono::seconds(60)))
      << "the watcher did not exit";
  EXPECT_TRUE(Alive(sleeper_));
}

TEST_F(OrphanWatchTest, TagsDifferBetweenWatches) {
  std::unique_ptr<OrphanWatch> first;
  std::unique_ptr<OrphanWatch> second;
  ASSERT_TRUE(OrphanWatch::Start(0.2, &first).ok());
  ASSERT_TRUE(OrphanWatch::Start(0.2, &second).ok());
  EXPECT_NE(first->tag(), second->tag());
  EXPECT_EQ(first->tag().rfind(std::to_string(getpid()) + "-", 0), 0u) << first->tag();
}

}  // namespace
}  // namespace hpo
