#include "tasks/command/child_process.hpp"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <thread>
#include <utility>

namespace hpo {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxLineBytes = size_t{1} << 20;
constexpr size_t kStderrTailLines = 20;
// The most one Poll reads from a pipe, so that a program writing without pause cannot keep Poll
// from returning. Linux's largest pipe (fs.pipe-max-size) by default: after the child's exit,
// everything it wrote fits in one read of this many bytes.
constexpr size_t kReadBudgetBytes = size_t{1} << 20;
// Without a pidfd (kernels before 5.3), how often a wait looks whether the child has exited.
constexpr int kExitCheckMs = 20;
// In the child, the report pipe's descriptor once stdin, stdout and stderr are in place.
constexpr int kReportFd = 3;
// The child's own stack until it execs: RunChild's few locals and the system calls it makes.
constexpr size_t kChildStackBytes = size_t{64} << 10;

// What the child reports back when it cannot exec the program.
enum class ChildStep : int { kSetup, kChdir, kExec };
struct ChildFailure {
  ChildStep step;
  int error;
};

// Everything the child needs, prepared before it starts (it shares this process's memory and may
// not allocate).
struct ExecPlan {
  std::vector<std::string> candidates;  // where to look for argv[0], in order
  std::vector<char*> argv;
  std::vector<char*> shell_argv;  // "/bin/sh", <candidate>, argv[1..]: for files without #!
  std::vector<char*> envp;
  const char* working_dir = "";
  int out_fd = -1;
  int err_fd = -1;
  int report_fd = -1;
  pid_t parent = -1;
  long max_fd = 0;
};

std::vector<char*> Pointers(const std::vector<std::string>& strings, size_t from) {
  std::vector<char*> pointers;
  for (size_t i = from; i < strings.size(); ++i) {
    pointers.push_back(const_cast<char*>(strings[i].c_str()));
  }
  pointers.push_back(nullptr);
  return pointers;
}

// Where execvp would try to run `name`, in order: the name itself when it has a '/', else each
// folder of PATH (`environment`'s, else this process's, else the C library's default).
std::vector<std::string> Candidates(const std::string& name,
                                    const std::vector<std::string>& environment) {
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos) return {name};
  const char* own_path = getenv("PATH");
  std::string path = own_path != nullptr ? own_path : "/bin:/usr/bin";
  for (const std::string& entry : environment) {
    if (entry.rfind("PATH=", 0) == 0) path = entry.substr(5);
  }
  std::vector<std::string> candidates;
  size_t start = 0;
  for (;;) {
    const size_t end = std::min(path.find(':', start), path.size());
    const std::string folder = path.substr(start, end - start);
    candidates.push_back(folder.empty() ? name : folder + "/" + name);
    if (end == path.size()) break;
    start = end + 1;
  }
  return candidates;
}

void CloseFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

// Writes all of `text`; false on an error (errno says which).
bool WriteAll(int fd, const std::string& text) {
  const char* data = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t written = write(fd, data, left);
    if (written < 0 && errno == EINTR) continue;
    if (written == 0) errno = EIO;
    if (written <= 0) return false;
    data += written;
    left -= static_cast<size_t>(written);
  }
  return true;
}

// In the child: tells the parent why the program could not be run, and exits.
[[noreturn]] void ReportAndExit(int report_fd, ChildStep step, int error) {
  const ChildFailure failure{step, error};
  const ssize_t ignored = write(report_fd, &failure, sizeof(failure));
  (void)ignored;
  _exit(127);
}

// In the child, which shares the parent's memory while the parent waits (CLONE_VM | CLONE_VFORK):
// async-signal-safe calls only, nothing allocated or freed. Never returns: execs the program, or
// reports why it could not (ReportAndExit).
int RunChild(void* argument) {
  ExecPlan* plan = static_cast<ExecPlan*>(argument);
  int report_fd = plan->report_fd;
  setpgid(0, 0);
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) ReportAndExit(report_fd, ChildStep::kSetup, errno);
  if (getppid() != plan->parent) _exit(127);  // the parent died before PDEATHSIG was armed
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = SIG_DFL;
  for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
    if (signal_number != SIGKILL && signal_number != SIGSTOP) {
      sigaction(signal_number, &action, nullptr);
    }
  }
  // Copies above kReportFd first, so that no dup2 below overwrites a descriptor still needed
  // (this process may have had 0, 1 or 2 closed, and a pipe got one of them).
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) ReportAndExit(report_fd, ChildStep::kSetup, errno);
  const int in = fcntl(null_fd, F_DUPFD, kReportFd + 1);
  const int out = fcntl(plan->out_fd, F_DUPFD, kReportFd + 1);
  const int err = fcntl(plan->err_fd, F_DUPFD, kReportFd + 1);
  const int report = fcntl(report_fd, F_DUPFD_CLOEXEC, kReportFd + 1);
  if (in < 0 || out < 0 || err < 0 || report < 0) {
    ReportAndExit(report_fd, ChildStep::kSetup, errno);
  }
  report_fd = report;
  if (dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0 ||
      dup2(report, kReportFd) < 0 || fcntl(kReportFd, F_SETFD, FD_CLOEXEC) < 0) {
    ReportAndExit(report_fd, ChildStep::kSetup, errno);
  }
  report_fd = kReportFd;
  // Nothing else this process holds (MPI's sockets and shared memory) reaches the program.
  if (close_range(kReportFd + 1, UINT_MAX, 0) != 0) {  // ENOSYS before Linux 5.9
    for (long fd = kReportFd + 1; fd < plan->max_fd; ++fd) close(static_cast<int>(fd));
  }
  if (plan->working_dir[0] != '\0' && chdir(plan->working_dir) != 0) {
    ReportAndExit(report_fd, ChildStep::kChdir, errno);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  // execvp's search: a missing or inaccessible candidate moves on to the next, any other error
  // ends it; EACCES is reported when some candidate was denied and none ran.
  int error = ENOENT;
  bool denied = false;
  for (const std::string& candidate : plan->candidates) {
    execve(candidate.c_str(), plan->argv.data(), plan->envp.data());
    if (errno == ENOEXEC) {
      plan->shell_argv[1] = const_cast<char*>(candidate.c_str());
      execve(plan->shell_argv[0], plan->shell_argv.data(), plan->envp.data());
    }
    error = errno;
    if (error == EACCES) {
      denied = true;
    } else if (error != ENOENT && error != ENOTDIR && error != ESTALE && error != ENODEV &&
               error != ETIMEDOUT) {
      ReportAndExit(report_fd, ChildStep::kExec, error);
    }
  }
  ReportAndExit(report_fd, ChildStep::kExec, denied ? EACCES : error);
}

// The child's stdout, stderr and failure report pipes ([0] read, [1] write; close-on-exec).
Status MakeChildPipes(int out[2], int err[2], int report[2]) {
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 || pipe2(report, O_CLOEXEC) != 0) {
    const int error = errno;
    for (int fd : {out[0], out[1], err[0], err[1], report[0], report[1]}) {
      if (fd >= 0) close(fd);
    }
    return Status::Failure(std::string("cannot create a pipe: ") + strerror(error));
  }
  return Status::Ok();
}

// What RunChild needs, prepared before the clone (the child allocates nothing). Points into
// `spec`, which must outlive it.
ExecPlan MakeExecPlan(const ChildSpec& spec, int out_fd, int err_fd, int report_fd) {
  ExecPlan plan;
  plan.candidates = Candidates(spec.argv[0], spec.environment);
  plan.argv = Pointers(spec.argv, 0);
  plan.shell_argv = Pointers(spec.argv, 1);
  plan.shell_argv.insert(plan.shell_argv.begin(), {const_cast<char*>("/bin/sh"), nullptr});
  plan.envp = Pointers(spec.environment, 0);
  plan.working_dir = spec.working_dir.c_str();
  plan.out_fd = out_fd;
  plan.err_fd = err_fd;
  plan.report_fd = report_fd;
  plan.parent = getpid();
  plan.max_fd = sysconf(_SC_OPEN_MAX);
  return plan;
}

// Starts RunChild(plan) and returns its pid once it has exec'd or exited (-1, with *error, when
// it could not start).
pid_t CloneChild(ExecPlan* plan, int* error) {
  // Every signal blocked until the child starts, so that none runs one of this process's handlers
  // in the child before it has put the default ones in place.
  sigset_t all;
  sigset_t old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  // posix_spawn's way (glibc's own): the child shares this process's memory on a stack of its own
  // and this thread waits until it has exec'd or exited, so no page table of a process that maps
  // libtorch and MPI is copied (fork took 10-20 ms here; bench/RESULTS.md).
  std::vector<char> child_stack(kChildStackBytes);
  const pid_t pid = clone(RunChild, child_stack.data() + child_stack.size(),
                          CLONE_VM | CLONE_VFORK | SIGCHLD, plan);
  *error = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return pid;
}

// The child's report of the step that failed before exec, as Start's status.
Status ChildStartFailure(const ChildFailure& failure, const ChildSpec& spec) {
  const std::string& program = spec.argv[0];
  const std::string reason = strerror(failure.error);
  switch (failure.step) {
    case ChildStep::kExec:
      return Status::BadInput("cannot run '" + program + "': " + reason);
    case ChildStep::kChdir:
      return Status::BadInput("cannot run '" + program + "' in '" + spec.working_dir +
                              "': " + reason);
    case ChildStep::kSetup:
      break;
  }
  return Status::Failure("cannot start '" + program + "': " + reason);
}

}  // namespace

std::string ChildExit::Describe() const {
  if (exited) return "exit status " + std::to_string(exit_code);
  if (signal == 0) return "exit status unknown";
  const char* name = sigabbrev_np(signal);
  return "killed by signal " + std::to_string(signal) +
         (name != nullptr ? std::string(" (SIG") + name + ")" : std::string());
}

Status ChildProcess::Start(const ChildSpec& spec, std::unique_ptr<ChildProcess>* child) {
  if (spec.argv.empty()) return Status::BadInput("cannot run an empty command");
  std::unique_ptr<ChildProcess> process(new ChildProcess());
  if (!spec.log_path.empty()) {
    process->log_fd_ = open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (process->log_fd_ < 0) {
      return Status::Failure("cannot open the log " + spec.log_path + ": " + strerror(errno));
    }
    process->log_path_ = spec.log_path;
  }
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  int report[2] = {-1, -1};
  HPO_RETURN_IF_ERROR(MakeChildPipes(out, err, report));
  ExecPlan plan = MakeExecPlan(spec, out[1], err[1], report[1]);
  int fork_error = 0;
  const pid_t pid = CloneChild(&plan, &fork_error);
  close(out[1]);
  close(err[1]);
  close(report[1]);
  if (pid < 0) {
    for (int fd : {out[0], err[0], report[0]}) close(fd);
    return Status::Failure(std::string("cannot start a process: ") + strerror(fork_error));
  }
  setpgid(pid, pid);  // also here, so that the group exists before Start returns
  process->pid_ = pid;
  process->out_fd_ = out[0];
  process->err_fd_ = err[0];
  ChildFailure failure;
  ssize_t got;
  do {
    got = read(report[0], &failure, sizeof(failure));
  } while (got < 0 && errno == EINTR);
  close(report[0]);
  if (got == static_cast<ssize_t>(sizeof(failure))) {
    process->KillAndReap();
    return ChildStartFailure(failure, spec);
  }
  for (int fd : {process->out_fd_, process->err_fd_}) {
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  // -1 (ENOSYS) before Linux 5.3: Poll then looks for the exit now and then. (A raw syscall:
  // glibc 2.36's <sys/pidfd.h> lacks extern "C".)
  process->pid_fd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  *child = std::move(process);
  return Status::Ok();
}

ChildProcess::~ChildProcess() { Release(); }

ChildProcess::ChildProcess(ChildProcess&& other) noexcept { *this = std::move(other); }

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this == &other) return *this;
  Release();
  pid_ = std::exchange(other.pid_, -1);
  out_fd_ = std::exchange(other.out_fd_, -1);
  err_fd_ = std::exchange(other.err_fd_, -1);
  pid_fd_ = std::exchange(other.pid_fd_, -1);
  log_fd_ = std::exchange(other.log_fd_, -1);
  log_path_ = std::exchange(other.log_path_, std::string());
  out_partial_ = std::exchange(other.out_partial_, std::string());
  err_partial_ = std::exchange(other.err_partial_, std::string());
  stderr_tail_ = std::exchange(other.stderr_tail_, std::deque<std::string>());
  exit_collected_ = std::exchange(other.exit_collected_, false);
  reaped_ = std::exchange(other.reaped_, false);
  exited_ = std::exchange(other.exited_, false);
  exit_ = std::exchange(other.exit_, ChildExit());
  return *this;
}

void ChildProcess::Release() {
  KillAndReap();
  CloseFd(&out_fd_);
  CloseFd(&err_fd_);
  CloseFd(&log_fd_);
}

void ChildProcess::CollectExit(bool block) {
  if (exit_collected_ || pid_ <= 0) return;
  siginfo_t info;
  memset(&info, 0, sizeof(info));
  // WNOWAIT: the pid stays ours (a zombie), so the group id cannot be reused before KillAndReap.
  const int options = WEXITED | WNOWAIT | (block ? 0 : WNOHANG);
  int result;
  do {
    result = waitid(P_PID, static_cast<id_t>(pid_), &info, options);
  } while (result < 0 && errno == EINTR);
  if (result < 0) {  // ECHILD: reaped elsewhere (SIGCHLD ignored); how it ended is unknown
    exit_collected_ = true;
    reaped_ = true;
    CloseFd(&pid_fd_);
    return;
  }
  if (info.si_pid != pid_) return;  // still running
  exit_collected_ = true;
  if (info.si_code == CLD_EXITED) {
    exit_.exited = true;
    exit_.exit_code = info.si_status;
  } else {
    exit_.signal = info.si_status;
  }
}

void ChildProcess::KillAndReap() {
  if (pid_ <= 0 || reaped_) return;
  kill(-pid_, SIGKILL);  // the program, or whatever it left behind in its group
  CollectExit(true);
  if (!reaped_) {
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
  }
  CloseFd(&pid_fd_);
}

void ChildProcess::EmitLine(std::string text, bool from_stderr, std::vector<OutputLine>* lines) {
  // A log that cannot be written (a full disk) is given up with one warning; the run goes on.
  if (log_fd_ >= 0 && !WriteAll(log_fd_, text + "\n")) {
    std::fprintf(stderr, "hpo: warning: writing %s: %s; the rest of this output is not logged\n",
                 log_path_.c_str(), strerror(errno));
    CloseFd(&log_fd_);
  }
  if (from_stderr) {
    stderr_tail_.push_back(text);
    if (stderr_tail_.size() > kStderrTailLines) stderr_tail_.pop_front();
  }
  if (lines != nullptr) lines->push_back({std::move(text), from_stderr});
}

void ChildProcess::ReadAvailable(bool from_stderr, std::vector<OutputLine>* lines) {
  int& fd = from_stderr ? err_fd_ : out_fd_;
  std::string& partial = from_stderr ? err_partial_ : out_partial_;
  char buffer[65536];
  for (size_t budget = kReadBudgetBytes; fd >= 0 && budget > 0;) {
    const ssize_t got = read(fd, buffer, std::min(sizeof(buffer), budget));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return;  // EAGAIN: nothing more for now
    if (got == 0) {       // every writer is gone
      CloseFd(&fd);
      return;
    }
    budget -= static_cast<size_t>(got);
    const char* data = buffer;
    const char* const end = buffer + got;
    while (data < end) {
      const char* newline =
          static_cast<const char*>(memchr(data, '\n', static_cast<size_t>(end - data)));
      partial.append(data, static_cast<size_t>((newline != nullptr ? newline : end) - data));
      while (partial.size() > kMaxLineBytes) {
        EmitLine(partial.substr(0, kMaxLineBytes), from_stderr, lines);
        partial.erase(0, kMaxLineBytes);
      }
      if (newline == nullptr) break;
      if (!partial.empty() && partial.back() == '\r') partial.pop_back();
      EmitLine(std::exchange(partial, std::string()), from_stderr, lines);
      data = newline + 1;
    }
  }
}

void ChildProcess::Drain(std::vector<OutputLine>* lines) {
  ReadAvailable(false, lines);
  ReadAvailable(true, lines);
  for (bool from_stderr : {false, true}) {
    std::string& partial = from_stderr ? err_partial_ : out_partial_;
    if (partial.empty()) continue;
    if (partial.back() == '\r') partial.pop_back();
    EmitLine(std::exchange(partial, std::string()), from_stderr, lines);
  }
  exited_ = true;
}

void ChildProcess::WaitForEvent(int timeout_ms) {
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const int remaining = static_cast<int>(std::max<Clock::rep>(
        0, std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count()));
    pollfd fds[3];
    nfds_t count = 0;
    for (int fd : {out_fd_, err_fd_, pid_fd_}) {
      if (fd >= 0) fds[count++] = {fd, POLLIN, 0};
    }
    const int slice = pid_fd_ >= 0 ? remaining : std::min(remaining, kExitCheckMs);
    int ready = 0;
    if (count > 0) {
      ready = poll(fds, count, slice);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(slice));
    }
    if (ready != 0 || slice >= remaining) return;  // an event, a signal, or the time is up
    CollectExit(false);
    if (exit_collected_) return;
  }
}

void ChildProcess::Poll(int timeout_ms, std::vector<OutputLine>* lines) {
  if (exited_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
    return;
  }
  WaitForEvent(timeout_ms);
  ReadAvailable(false, lines);
  ReadAvailable(true, lines);
  CollectExit(false);
  // The child is gone, and what it wrote is in the pipes (a program it left behind may hold them
  // open: its later output is not read).
  if (exit_collected_) Drain(lines);
}

void ChildProcess::Terminate() {
  if (pid_ > 0 && !reaped_) kill(-pid_, SIGTERM);
}

void ChildProcess::Kill() {
  if (pid_ > 0 && !reaped_) kill(-pid_, SIGKILL);
}

void ChildProcess::Stop(double grace_s, std::vector<OutputLine>* lines) {
  if (pid_ <= 0) return;
  if (!exited_) {
    Terminate();
    const Clock::time_point deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(std::max(grace_s, 0.0)));
    while (!exited_) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) break;
      Poll(static_cast<int>(std::min<std::chrono::milliseconds::rep>(left.count(), 100)), lines);
    }
  }
  KillAndReap();
  if (!exited_) Drain(lines);
  CloseFd(&out_fd_);
  CloseFd(&err_fd_);
}

std::string ChildProcess::StderrTail() const {
  std::string tail;
  for (const std::string& line : stderr_tail_) {
    if (!tail.empty()) tail += '\n';
    tail += line;
  }
  return tail;
}

}  // namespace hpo
