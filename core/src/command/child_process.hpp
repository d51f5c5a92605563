// One child process of the user's program, in a process group of its own: started with a given
// environment, its stdout and stderr read line by line (and appended to a log file), stopped with
// SIGTERM then SIGKILL to the whole group. POSIX (Linux) only; no MPI, no torch.
#pragma once

#include <sys/types.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "hpo/status.hpp"

namespace hpo {

struct ChildSpec {
  std::vector<std::string> argv;         // argv[0] is looked up on the environment's PATH
  std::vector<std::string> environment;  // the complete environment, "KEY=VALUE" each
  std::string working_dir;               // empty: the parent's
  std::string log_path;                  // every output line is appended here; empty: no log
};

// How a child ended.
struct ChildExit {
  bool exited = false;  // true: exit_code is valid; false: killed by `signal`
  int exit_code = 0;
  int signal = 0;
  // "exit status 1" or "killed by signal 9 (SIGKILL)".
  std::string Describe() const;
};

struct OutputLine {
  std::string text;  // without the line end
  bool from_stderr = false;
};

// Owns one child process and its process group. Move-only; used by one thread.
class ChildProcess {
 public:
  // Starts the child: its own process group (setpgid), PR_SET_PDEATHSIG SIGKILL (so it dies with
  // this process's thread that started it), default signal dispositions and an empty signal mask,
  // stdin from /dev/null, stdout and stderr to pipes, no other inherited descriptors. An exec
  // failure (no such program, not executable) is BadInput "cannot run 'ARGV0': REASON", and no
  // child is left behind.
  static Status Start(const ChildSpec& spec, std::unique_ptr<ChildProcess>* child);

  ~ChildProcess();  // SIGKILL to the group if anything of it may still run, then reaps
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Waits up to timeout_ms (0: not at all) for output or the child's exit; appends every complete
  // line read to `lines` (and to the log). Once the child has exited, its remaining output is
  // drained (a last line without a newline included) and Exited() becomes true.
  void Poll(int timeout_ms, std::vector<OutputLine>* lines);
  bool Exited() const { return exited_; }
  const ChildExit& exit() const { return exit_; }  // valid once Exited()
  pid_t pid() const { return pid_; }

  void Terminate();  // SIGTERM to the process group
  void Kill();       // SIGKILL to the process group

  // SIGTERM to the group, up to grace_s for the child to exit (its output still read into
  // `lines`), then SIGKILL to the group; returns once the child is reaped and the group is gone
  // from this host's view (SIGKILL sent to stragglers).
  void Stop(double grace_s, std::vector<OutputLine>* lines);

  // The last lines of stderr (at most 20), joined with '\n'.
  std::string StderrTail() const;

 private:
  ChildProcess() = default;
  void ReadAvailable(int fd, bool from_stderr, std::vector<OutputLine>* lines);
  void EmitLine(std::string text, bool from_stderr, std::vector<OutputLine>* lines);
  void Reap(bool block);
  void CloseLog();

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  int log_fd_ = -1;
  std::string out_partial_;
  std::string err_partial_;
  std::deque<std::string> stderr_tail_;
  bool reaped_ = false;
  bool exited_ = false;
  ChildExit exit_;
};

}  // namespace hpo
