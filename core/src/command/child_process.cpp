#include "child_process.hpp"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <thread>

namespace hpo {

namespace {

constexpr size_t kMaxLineBytes = 1 << 20;
constexpr size_t kStderrTailLines = 20;

// Where execve should find argv0: a path as given, else the first executable file of that name on
// the environment's PATH (as execvp would); "" when there is none.
std::string ResolveProgram(const std::string& name, const std::vector<std::string>& environment) {
  if (name.find('/') != std::string::npos) return name;
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const std::string& entry : environment) {
    if (entry.rfind("PATH=", 0) == 0) path = entry.substr(5);
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string folder = path.substr(start, end - start);
    if (folder.empty()) folder = ".";
    const std::string candidate = folder + "/" + name;
    struct stat info;
    if (stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    start = end + 1;
  }
  return "";
}

std::vector<char*> Pointers(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (const std::string& text : strings) pointers.push_back(const_cast<char*>(text.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

void CloseFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

// In the child after fork: only async-signal-safe calls. Reports errno on `status_fd` and exits
// 127 when anything fails.
[[noreturn]] void RunChild(const char* program, char* const* argv, char* const* envp,
                           const char* working_dir, int out_fd, int err_fd, int status_fd,
                           pid_t parent) {
  auto fail = [status_fd]() {
    const int error = errno;
    ssize_t ignored = write(status_fd, &error, sizeof(error));
    (void)ignored;
    _exit(127);
  };
  setpgid(0, 0);
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail();
  if (getppid() != parent) _exit(127);  // the parent died before PDEATHSIG was armed
  for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
    if (signal_number != SIGKILL && signal_number != SIGSTOP) signal(signal_number, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  const int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) fail();
  if (working_dir[0] != '\0' && chdir(working_dir) != 0) fail();
  // Nothing else the parent holds (MPI's sockets and shared memory) reaches the program.
  if (status_fd > 3) close_range(3, static_cast<unsigned>(status_fd) - 1, 0);
  close_range(static_cast<unsigned>(status_fd) + 1, UINT_MAX, 0);
  execve(program, argv, envp);
  fail();
  _exit(127);
}

}  // namespace

std::string ChildExit::Describe() const {
  if (exited) return "exit status " + std::to_string(exit_code);
  const char* name = sigabbrev_np(signal);
  return "killed by signal " + std::to_string(signal) +
         (name != nullptr ? std::string(" (SIG") + name + ")" : std::string());
}

Status ChildProcess::Start(const ChildSpec& spec, std::unique_ptr<ChildProcess>* child) {
  if (spec.argv.empty()) return Status::BadInput("cannot run an empty command");
  const std::string program = ResolveProgram(spec.argv[0], spec.environment);
  if (program.empty()) {
    return Status::BadInput("cannot run '" + spec.argv[0] + "': not found on the PATH");
  }
  std::unique_ptr<ChildProcess> process(new ChildProcess());
  if (!spec.log_path.empty()) {
    process->log_fd_ = open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (process->log_fd_ < 0) {
      return Status::Failure(spec.log_path + ": cannot open the log: " + strerror(errno));
    }
  }
  int out[2];
  int err[2];
  int status[2];
  if (pipe2(out, O_CLOEXEC) != 0) return Status::Failure("pipe: " + std::string(strerror(errno)));
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return Status::Failure("pipe: " + std::string(strerror(errno)));
  }
  if (pipe2(status, O_CLOEXEC) != 0) {
    for (int fd : {out[0], out[1], err[0], err[1]}) close(fd);
    return Status::Failure("pipe: " + std::string(strerror(errno)));
  }
  std::vector<char*> argv = Pointers(spec.argv);
  std::vector<char*> envp = Pointers(spec.environment);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    RunChild(program.c_str(), argv.data(), envp.data(), spec.working_dir.c_str(), out[1], err[1],
             status[1], parent);
  }
  close(out[1]);
  close(err[1]);
  close(status[1]);
  if (pid < 0) {
    for (int fd : {out[0], err[0], status[0]}) close(fd);
    return Status::Failure("fork: " + std::string(strerror(errno)));
  }
  setpgid(pid, pid);  // also here, so the group exists before Start returns
  process->pid_ = pid;
  process->out_fd_ = out[0];
  process->err_fd_ = err[0];
  int child_errno = 0;
  ssize_t got;
  do {
    got = read(status[0], &child_errno, sizeof(child_errno));
  } while (got < 0 && errno == EINTR);
  close(status[0]);
  if (got == static_cast<ssize_t>(sizeof(child_errno))) {
    process->Reap(true);
    process->pid_ = -1;
    return Status::BadInput("cannot run '" + spec.argv[0] + "': " + strerror(child_errno));
  }
  for (int fd : {process->out_fd_, process->err_fd_}) {
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  *child = std::move(process);
  return Status::Ok();
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) {
    kill(-pid_, SIGKILL);
    if (!reaped_) Reap(true);
  }
  CloseFd(&out_fd_);
  CloseFd(&err_fd_);
  CloseLog();
}

void ChildProcess::Reap(bool block) {
  if (reaped_ || pid_ <= 0) return;
  int status = 0;
  pid_t done;
  do {
    done = waitpid(pid_, &status, block ? 0 : WNOHANG);
  } while (done < 0 && errno == EINTR);
  if (done != pid_) return;
  reaped_ = true;
  if (WIFEXITED(status)) {
    exit_.exited = true;
    exit_.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    exit_.exited = false;
    exit_.signal = WTERMSIG(status);
  }
}

void ChildProcess::EmitLine(std::string text, bool from_stderr, std::vector<OutputLine>* lines) {
  if (!text.empty() && text.back() == '\r') text.pop_back();
  if (log_fd_ >= 0) {
    std::string record = text + "\n";
    const char* data = record.data();
    size_t left = record.size();
    while (left > 0) {
      const ssize_t written = write(log_fd_, data, left);
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) {
        CloseLog();  // a full disk costs the log, not the trial
        break;
      }
      data += written;
      left -= static_cast<size_t>(written);
    }
  }
  if (from_stderr) {
    stderr_tail_.push_back(text);
    if (stderr_tail_.size() > kStderrTailLines) stderr_tail_.pop_front();
  }
  if (lines != nullptr) lines->push_back({std::move(text), from_stderr});
}

void ChildProcess::ReadAvailable(int fd, bool from_stderr, std::vector<OutputLine>* lines) {
  int& own_fd = from_stderr ? err_fd_ : out_fd_;
  std::string& partial = from_stderr ? err_partial_ : out_partial_;
  char buffer[65536];
  for (;;) {
    const ssize_t got = read(fd, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return;  // EAGAIN: nothing more for now
    if (got == 0) {       // EOF: every writer is gone
      if (!partial.empty()) EmitLine(std::move(partial), from_stderr, lines);
      partial.clear();
      CloseFd(&own_fd);
      return;
    }
    size_t start = 0;
    for (ssize_t i = 0; i < got; ++i) {
      if (buffer[i] != '\n') continue;
      partial.append(buffer + start, static_cast<size_t>(i) - start);
      EmitLine(std::move(partial), from_stderr, lines);
      partial.clear();
      start = static_cast<size_t>(i) + 1;
    }
    partial.append(buffer + start, static_cast<size_t>(got) - start);
    while (partial.size() >= kMaxLineBytes) {
      EmitLine(partial.substr(0, kMaxLineBytes), from_stderr, lines);
      partial.erase(0, kMaxLineBytes);
    }
  }
}

void ChildProcess::Poll(int timeout_ms, std::vector<OutputLine>* lines) {
  if (exited_) return;
  pollfd fds[2];
  int count = 0;
  if (out_fd_ >= 0) fds[count++] = {out_fd_, POLLIN, 0};
  if (err_fd_ >= 0) fds[count++] = {err_fd_, POLLIN, 0};
  if (count > 0) {
    poll(fds, static_cast<nfds_t>(count), timeout_ms);
  } else if (timeout_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
  }
  if (out_fd_ >= 0) ReadAvailable(out_fd_, false, lines);
  if (err_fd_ >= 0) ReadAvailable(err_fd_, true, lines);
  Reap(false);
  if (!reaped_) return;
  // The child is gone; what it wrote is in the pipes (a program it left behind may hold them open:
  // its later output is not the trial's).
  if (out_fd_ >= 0) ReadAvailable(out_fd_, false, lines);
  if (err_fd_ >= 0) ReadAvailable(err_fd_, true, lines);
  if (!out_partial_.empty()) EmitLine(std::move(out_partial_), false, lines);
  if (!err_partial_.empty()) EmitLine(std::move(err_partial_), true, lines);
  out_partial_.clear();
  err_partial_.clear();
  exited_ = true;
}

void ChildProcess::Terminate() {
  if (pid_ > 0 && !reaped_) kill(-pid_, SIGTERM);
}

void ChildProcess::Kill() {
  if (pid_ > 0) kill(-pid_, SIGKILL);
}

void ChildProcess::Stop(double grace_s, std::vector<OutputLine>* lines) {
  if (pid_ <= 0) return;
  if (!exited_) {
    Terminate();
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(grace_s));
    while (!exited_ && std::chrono::steady_clock::now() < deadline) Poll(20, lines);
  }
  Kill();  // the program, or anything it left behind in its group
  if (!reaped_) Reap(true);
  if (!exited_) Poll(0, lines);
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

void ChildProcess::CloseLog() { CloseFd(&log_fd_); }

}  // namespace hpo
