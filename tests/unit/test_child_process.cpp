// ChildProcess against real /bin/sh children: stdout and stderr lines (partial last line, "\r\n",
// lines over 1 MiB), the exact environment, no inherited descriptors, the PATH search,
// working_dir, exit codes and signal deaths, exec failures without zombies, SIGTERM and SIGKILL
// reaching the whole process group, PR_SET_PDEATHSIG, the log file, and the parent's blocked and
// ignored signals not inherited. Every test ends with this process having no child left. Waits are
// on progress with 30 s deadlines, never on a wall-clock figure.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "tasks/command/child_process.hpp"

namespace hpo {
namespace {

namespace fs = std::filesystem;

static_assert(!std::is_copy_constructible_v<ChildProcess>, "ChildProcess is move-only");
static_assert(std::is_nothrow_move_constructible_v<ChildProcess>, "ChildProcess is move-only");

constexpr auto kDeadline = std::chrono::seconds(30);

// Calls `done` until it holds or 30 s pass; returns its last answer.
bool WaitFor(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// The fields of /proc/PID/stat after the command name: state, ppid, ...; empty when none.
std::vector<std::string> StatFields(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(file, text);
  const size_t name_end = text.rfind(')');
  if (name_end == std::string::npos) return {};
  std::istringstream rest(text.substr(name_end + 1));
  std::vector<std::string> fields;
  for (std::string field; rest >> field;) fields.push_back(field);
  return fields;
}

// True when `pid` no longer runs: gone, or a zombie left to a reaper that is not this process.
bool ProcessGone(pid_t pid) {
  if (kill(pid, 0) != 0 && errno == ESRCH) return true;
  const std::vector<std::string> fields = StatFields(pid);
  return fields.empty() || fields[0] == "Z";
}

// Processes (zombies included) whose parent is this process.
std::vector<pid_t> OwnChildren() {
  std::vector<pid_t> children;
  const std::string self = std::to_string(getpid());
  for (const fs::directory_entry& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::vector<std::string> fields = StatFields(std::stoi(name));
    if (fields.size() > 1 && fields[1] == self) children.push_back(std::stoi(name));
  }
  return children;
}

void ExpectNoChildren() {
  int status = 0;
  errno = 0;
  EXPECT_EQ(waitpid(-1, &status, WNOHANG), -1) << "a child is left (exited or running)";
  EXPECT_EQ(errno, ECHILD);
  EXPECT_TRUE(OwnChildren().empty()) << "a process of ours is still in /proc";
}

ChildSpec Shell(const std::string& script) {
  ChildSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.environment = {"PATH=/usr/bin:/bin"};
  return spec;
}

// Polls until the child has exited (30 s at most); returns every line read.
std::vector<OutputLine> RunToExit(ChildProcess* child) {
  std::vector<OutputLine> lines;
  const bool exited = WaitFor([&] {
    child->Poll(100, &lines);
    return child->Exited();
  });
  EXPECT_TRUE(exited) << "the child did not exit within 30 s";
  return lines;
}

// Polls until `count` lines have been read (30 s at most); returns them.
std::vector<OutputLine> ReadLines(ChildProcess* child, size_t count) {
  std::vector<OutputLine> lines;
  EXPECT_TRUE(WaitFor([&] {
    child->Poll(100, &lines);
    return lines.size() >= count;
  })) << "fewer than "
      << count << " lines within 30 s";
  return lines;
}

std::vector<std::string> Texts(const std::vector<OutputLine>& lines, bool from_stderr) {
  std::vector<std::string> texts;
  for (const OutputLine& line : lines) {
    if (line.from_stderr == from_stderr) texts.push_back(line.text);
  }
  return texts;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

void WriteFile(const fs::path& path, const std::string& text, fs::perms perms) {
  std::ofstream(path, std::ios::binary) << text;
  fs::permissions(path, perms);
}

class ChildProcessTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = testing::TempDir() + "hpo_child_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    ExpectNoChildren();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  fs::path dir_;
};

TEST_F(ChildProcessTest, ReadsStdoutAndStderrLines) {
  std::unique_ptr<ChildProcess> child;
  ASSERT_TRUE(
      ChildProcess::Start(Shell("echo out1; echo err1 >&2; echo out2; echo err2 >&2"), &child)
          .ok());
  ASSERT_NE(child, nullptr);
  EXPECT_GT(child->pid(), 0);
  const std::vector<OutputLine> lines = RunToExit(child.get());
  EXPECT_EQ(Texts(lines, false), (std::vector<std::string>{"out1", "out2"}));
  EXPECT_EQ(Texts(lines, true), (std::vector<std::string>{"err1", "err2"}));
  EXPECT_TRUE(child->exit().exited);
  EXPECT_EQ(child->exit().exit_code, 0);
  EXPECT_EQ(child->exit().Describe(), "exit status 0");
}

TEST_F(ChildProcessTest, KeepsPartialLastLinesAndDropsCarriageReturns) {
  std::unique_ptr<ChildProcess> child;
  ASSERT_TRUE(
      ChildProcess::Start(Shell(R"(printf 'one\r\ntwo\n\nthree'; printf 'e1\r\ne2' >&2)"), &child)
          .ok());
  const std::vector<OutputLine> lines = RunToExit(child.get());
  EXPECT_EQ(Texts(lines, false), (std::vector<std::string>{"one", "two", "", "three"}));
  EXPECT_EQ(Texts(lines, true), (std::vector<std::string>{"e1", "e2"}));
}

TEST_F(ChildProcessTest, CutsLinesOverOneMebibyte) {
  std::unique_ptr<ChildProcess> child;
  ASSERT_TRUE(ChildProcess::Start(Shell("head -c 1048586 /dev/zero | tr '\\0' x; echo; "
                                        "head -c 1048576 /dev/zero | tr '\\0' y; echo; echo after"),
                                  &child)
                  .ok());
  const std::vector<std::string> lines = Texts(RunToExit(child.get()), false);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], std::string(1048576, 'x'));
  EXPECT_EQ(lines[1], std::string(10, 'x'));
  EXPECT_EQ(lines[2], std::string(1048576, 'y'));  // exactly 1 MiB: one line
  EXPECT_EQ(lines[3], "after");
}

TEST_F(ChildProcessTest, InheritsOnlyStdinFromDevNullAndTheTwoPipes) {
  const int leaked = open("/dev/null", O_RDONLY);  // no O_CLOEXEC: exec alone would pass it on
  ASSERT_GE(leaked, 0);
  ChildSpec spec;
  spec.environment = {"PATH=/usr/bin:/bin"};
  std::unique_ptr<ChildProcess> child;
  spec.argv = {"ls", "/proc/self/fd"};  // 3 is ls's own, reading that folder
  ASSERT_TRUE(ChildProcess::Start(spec, &child).ok());
  EXPECT_EQ(Texts(RunToExit(child.get()), false), (std::vector<std::string>{"0", "1", "2", "3"}));
  spec.argv = {"readlink", "/proc/self/fd/0"};
  ASSERT_TRUE(ChildProcess::Start(spec, &child).ok());
  EXPECT_EQ(Texts(RunToExit(child.get()), false), std::vector<std::string>{"/dev/null"});
  close(leaked);
}

TEST_F(ChildProcessTest, PassesExactlyTheGivenEnvironment) {
  ChildSpec spec;
  spec.argv = {"env"};  // found on the given PATH
  spec.environment = {"PATH=/usr/bin:/bin", "HPO_A=1", "HPO_B=two words", "HPO_EMPTY="};
  std::unique_ptr<ChildProcess> child;
  ASSERT_TRUE(ChildProcess::Start(spec, &child).ok());
  std::vector<std::string> seen = Texts(RunToExit(child.get()), false);
  std::sort(seen.begin(), seen.end());
  std::vector<std::string> expected = spec.environment;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(seen, expected);
}

TEST_F(ChildProcessTest, SearchesTheEnvironmentsPathLikeExecvp) {
  const fs::path denied = dir_ / "denied";
  const fs::path tools = dir_ / "tools";
  fs::create_directories(denied);
  fs::create_directories(tools);
  WriteFile(denied / "hpo-tool", "#!/bin/sh\necho denied\n", fs::perms::owner_read);
  WriteFile(tools / "hpo-tool", "#!/bin/sh\necho \"tool $1\"\n", fs::perms::owner_all);
  WriteFile(tools / "hpo-plain", "echo \"plain $1\"\n", fs::perms::owner_all);  // no #! line

  ChildSpec spec;
  spec.environment = {"PATH=" + denied.string() + ":" + tools.string()};
  std::unique_ptr<ChildProcess> child;
  spec.argv = {"hpo-tool", "arg"};
  ASSERT_TRUE(ChildProcess::Start(spec, &child).ok());
  EXPECT_EQ(Texts(RunToExit(child.get()), false), std::vector<std::string>{"tool arg"});
  spec.argv = {"hpo-plain", "arg"};
  ASSERT_TRUE(ChildProcess::Start(spec, &child).ok());
  EXPECT_EQ(Texts(RunToExit(child.get()), false), std::vector<std::string>{"plain arg"});

  // Only the unexecutable one: EACCES, as execvp reports it.
  child.reset();
  spec.environment = {"PATH=" + denied.string()};
  spec.argv = {"hpo-tool"};
  const Status status = ChildProcess::Start(spec, &child);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message(), "cannot run 'hpo-tool': " + std::string(strerror(EACCES)));
  EXPECT_EQ(child, nullptr);
  ExpectNoChildren();
}

TEST_F(ChildProcessTest, RunsInTheWorkingDirectory) {
  ChildSpec spec = Shell("pwd -P");
  spec.working_dir = dir_.string();
  std::unique_ptr<ChildProcess> child;
  ASSERT_TRUE(ChildProcess::Start(spec, &child).ok());
  EXPECT_EQ(Texts(RunToExit(child.get()), false),
            std::vector<std::string>{fs::canonical(dir_).string()});

  child.reset();
  spec.working_dir = (dir_ / "missing").string();
  const Status status = ChildProcess::Start(spec, &child);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message(),
            "cannot run '/bin/sh' in '" + spec.working_dir + "': " + strerror(ENOENT));
  EXPECT_EQ(child, nullptr);
  ExpectNoChildren();
}

TEST_F(ChildProcessTest, ReportsExitCodesAndSignalDeaths) {
  std::unique_ptr<ChildProcess> child;
  ASSERT_TRUE(ChildProcess::Start(Shell("echo bye >&2; exit 3"), &child).ok());
  RunToExit(child.get());
  EXPECT_TRUE(child->exit().exited);
  EXPECT_EQ(child->exit().exit_code, 3);
  EXPECT_EQ(child->exit().Describe(), "exit status 3");
  EXPECT_EQ(child->StderrTail(), "bye");
  std::vector<OutputLine> lines;
  child->Stop(30, &lines);  // already exited: reaps, keeps the status
  EXPECT_TRUE(child->Exited());
  EXPECT_EQ(child->exit().exit_code, 3);
  ExpectNoChildren();

  ASSERT_TRUE(ChildProcess::Start(Shell("kill -KILL $$"), &child).ok());
  RunToExit(child.get());
  EXPECT_FALSE(child->exit().exited);
  EXPECT_EQ(child->exit().signal, SIGKILL);
  EXPECT_EQ(child->exit().Describe(), "killed by signal 9 (SIGKILL)");
}

TEST_F(ChildProcessTest, ExecFailureIsBadInputAndLeavesNoZombie) {
  const fs::path not_executable = dir_ / "data.txt";
  WriteFile(not_executable, "#!/bin/sh\necho never\n",
            fs::perms::owner_read | fs::perms::owner_write);
  const struct {
    std::string argv0;
    std::vector<std::string> environment;
    int error;
  } cases[] = {
      {"/nonexistent-hpo-dir/program", {}, ENOENT},
      {"hpo-no-such-program", {"PATH=" + dir_.string() + ":/usr/bin:/bin"}, ENOENT},
      {not_executable.string(), {}, EACCES},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.argv0);
    ChildSpec spec;
    spec.argv = {c.argv0};
    spec.environment = c.environment;
    std::unique_ptr<ChildProcess> child;
    const Status status = ChildProcess::Start(spec, &child);
    EXPECT_EQ(status.code(), Status::Code::kBadInput);
    EXPECT_EQ(status.message(), "cannot run '" + c.argv0 + "': " + strerror(c.error));
    EXPECT_EQ(child, nullptr);
    ExpectNoChildren();
  }
}

TEST_F(ChildProcessTest, LogFileGetsEveryLineAsItArrives) {
  const fs::path log = dir_ / "rank-0.log";
  WriteFile(log, "earlier\n", fs::perms::owner_read | fs::perms::owner_write);
  ChildSpec spec = Shell("echo first; echo second >&2; echo third; exec sleep 1000");
  spec.log_path = log.string();
  std::unique_ptr<ChildProcess> child;
  ASSERT_TRUE(ChildProcess::Start(spec, &child).ok());
  ReadLines(child.get(), 3);
  EXPECT_FALSE(child->Exited());
  // Written while the program still runs, appended to what was there.
  const std::string text = ReadFile(log);
  ASSERT_EQ(text.rfind("earlier\n", 0), 0u) << text;
  std::vector<std::string> logged;
  std::istringstream rest(text.substr(8));
  for (std::string line; std::getline(rest, line);) logged.push_back(line);
  std::sort(logged.begin(), logged.end());
  EXPECT_EQ(logged, (std::vector<std::string>{"first", "second", "third"}));
  child->Stop(30, nullptr);
  EXPECT_EQ(child->exit().signal, SIGTERM);
}

TEST_F(ChildProcessTest, LogThatCannotBeOpenedFailsCleanly) {
  ChildSpec spec = Shell("echo never");
  spec.log_path = (dir_ / "missing" / "rank-0.log").string();
  std::unique_ptr<ChildProcess> child;
  const Status status = ChildProcess::Start(spec, &child);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find(spec.log_path), std::string::npos) << status.message();
  EXPECT_EQ(child, nullptr);
}

TEST_F(ChildProcessTest, StderrTailKeepsTheLastTwentyLines) {
  std::unique_ptr<ChildProcess> child;
  ASSERT_TRUE(ChildProcess::Start(
                  Shell("i=1; while [ $i -le 30 ]; do echo e$i >&2; i=$((i+1)); done"), &child)
                  .ok());
  RunToExit(child.get());
  std::string expected;
  for (int i = 11; i <= 30; ++i) expected += (i > 11 ? "\ne" : "e") + std::to_string(i);
  EXPECT_EQ(child->StderrTail(), expected);
}

// The pid that the script printed on its first stdout line.
pid_t FirstLinePid(ChildProcess* child) {
  const std::vector<OutputLine> lines = ReadLines(child, 1);
  return lines.empty() ? -1 : static_cast<pid_t>(std::stoi(lines[0].text));
}

TEST_F(ChildProcessTest, TerminateReachesGrandchildren) {
  std::unique_ptr<ChildProcess> child;
  ASSERT_TRUE(ChildProcess::Start(Shell("sleep 1000 & echo $!; wait"), &child).ok());
  const pid_t grandchild = FirstLinePid(child.get());
  ASSERT_GT(grandchild, 0);
  EXPECT_FALSE(ProcessGone(grandchild));
  child->Terminate();
  RunToExit(child.get());
  EXPECT_EQ(child->exit().signal, SIGTERM);
  EXPECT_TRUE(WaitFor([&] { return ProcessGone(grandchild); }));  // by SIGTERM, before any Stop
  child->Stop(30, nullptr);
}

TEST_F(ChildProcessTest, ExitDoesNotWaitForLeftoversAndStopKillsThem) {
  for (bool stop : {true, false}) {
    SCOPED_TRACE(stop ? "Stop" : "destructor");
    std::unique_ptr<ChildProcess> child;
    // The background sleep keeps stdout and stderr open after the shell exits.
    ASSERT_TRUE(ChildProcess::Start(Shell("sleep 1000 & echo $!"), &child).ok());
    const std::vector<OutputLine> lines = RunToExit(child.get());
    ASSERT_EQ(lines.size(), 1u);
    const pid_t grandchild = static_cast<pid_t>(std::stoi(lines[0].text));
    EXPECT_EQ(child->exit().Describe(), "exit status 0");
    EXPECT_FALSE(ProcessGone(grandchild));
    if (stop) {
      child->Stop(30, nullptr);
      EXPECT_EQ(child->exit().Describe(), "exit status 0");
    } else {
      child.reset();
    }
    EXPECT_TRUE(WaitFor([&] { return ProcessGone(grandchild); }));
    ExpectNoChildren();
  }
}

TEST_F(ChildProcessTest, StopEscalatesToSigkill) {
  std::unique_ptr<ChildProcess> child;
  ASSERT_TRUE(ChildProcess::Start(Shell("trap '' TERM; sleep 1000 & echo $!; wait"), &child).ok());
  const pid_t grandchild = FirstLinePid(child.get());  // printed once TERM is ignored
  ASSERT_GT(grandchild, 0);
  std::vector<OutputLine> lines;
  child->Stop(0.2, &lines);
  EXPECT_TRUE(child->Exited());
  EXPECT_EQ(child->exit().Describe(), "killed by signal 9 (SIGKILL)");
  EXPECT_TRUE(WaitFor([&] { return ProcessGone(grandchild); }));
}

TEST_F(ChildProcessTest, DestructorKillsARunningChild) {
  std::unique_ptr<ChildProcess> child;
  ASSERT_TRUE(ChildProcess::Start(Shell("sleep 1000 & echo $!; wait"), &child).ok());
  const pid_t grandchild = FirstLinePid(child.get());
  ASSERT_GT(grandchild, 0);
  const pid_t leader = child->pid();
  child.reset();
  EXPECT_TRUE(ProcessGone(leader));
  EXPECT_TRUE(WaitFor([&] { return ProcessGone(grandchild); }));
}

TEST_F(ChildProcessTest, MovesKeepTheChild) {
  std::unique_ptr<ChildProcess> child;
  // `cat` ends at once: stdin is /dev/null.
  ASSERT_TRUE(ChildProcess::Start(Shell("cat; echo moved; exit 4"), &child).ok());
  ChildProcess moved(std::move(*child));
  child.reset();  // the moved-from object owns nothing
  ChildProcess target = std::move(moved);
  EXPECT_EQ(Texts(RunToExit(&target), false), std::vector<std::string>{"moved"});
  EXPECT_EQ(target.exit().Describe(), "exit status 4");
}

TEST_F(ChildProcessTest, ChildDiesWithTheProcessThatStartedIt) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t helper = fork();
  ASSERT_GE(helper, 0);
  if (helper == 0) {
    close(fds[0]);
    std::unique_ptr<ChildProcess> child;
    const pid_t pid =
        ChildProcess::Start(Shell("exec sleep 1000"), &child).ok() ? child->pid() : -1;
    const ssize_t ignored = write(fds[1], &pid, sizeof(pid));
    (void)ignored;
    _exit(0);  // no destructor: only PR_SET_PDEATHSIG ends the sleep
  }
  close(fds[1]);
  pid_t sleeper = -1;
  EXPECT_EQ(read(fds[0], &sleeper, sizeof(sleeper)), static_cast<ssize_t>(sizeof(sleeper)));
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(helper, &status, 0), helper);
  ASSERT_GT(sleeper, 0);
  EXPECT_TRUE(WaitFor([&] { return ProcessGone(sleeper); }));
}

// Blocks SIGTERM and ignores SIGUSR1 in this process while it lives.
class HostileSignalState {
 public:
  HostileSignalState() {
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, &old_mask_);
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGUSR1, &ignore, &old_usr1_);
  }
  ~HostileSignalState() {
    sigaction(SIGUSR1, &old_usr1_, nullptr);
    sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
  }

 private:
  sigset_t old_mask_;
  struct sigaction old_usr1_;
};

TEST_F(ChildProcessTest, ParentsBlockedAndIgnoredSignalsAreNotInherited) {
  const HostileSignalState hostile;
  for (int signal_number : {SIGTERM, SIGUSR1}) {
    SCOPED_TRACE(signal_number);
    std::unique_ptr<ChildProcess> child;
    ASSERT_TRUE(ChildProcess::Start(Shell("kill -" + std::string(sigabbrev_np(signal_number)) +
                                          " $$; echo survived"),
                                    &child)
                    .ok());
    EXPECT_TRUE(RunToExit(child.get()).empty());
    EXPECT_FALSE(child->exit().exited);
    EXPECT_EQ(child->exit().signal, signal_number);
  }
}

}  // namespace
}  // namespace hpo
