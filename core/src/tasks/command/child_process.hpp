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

// What to run. A plain value.
struct ChildSpec {
  // argv[0] is looked up as execvp does: a name with a '/' is a path (relative to working_dir),
  // else the first match on the PATH of `environment` (this process's PATH when it has none; an
  // empty entry is working_dir); a file without a #! line runs under /bin/sh.
  std::vector<std::string> argv;
  std::vector<std::string> environment;  // the complete environment, "KEY=VALUE" each
  std::string working_dir;               // empty: this process's
  // Every stdout and stderr line is appended here (created; its folder must exist), written as
  // it is read. Empty: no log.
  std::string log_path;
};

// How a child ended. A plain value.
struct ChildExit {
  bool exited = false;  // true: exit_code is valid; false: killed by `signal`
  int exit_code = 0;
  int signal = 0;  // 0 with exited == false: unknown (the child was reaped behind our back)
  // "exit status 1", "killed by signal 9 (SIGKILL)" or "exit status unknown".
  std::string Describe() const;
};

// One line of the child's output, without its line end. A plain value.
struct OutputLine {
  std::string text;
  bool from_stderr = false;
};

// Owns one child process and its process group (the group's id is the child's pid): nothing of
// the group outlives this object (a process that leaves the group, by setsid, escapes it), and no
// zombie is left. Move-only; not thread-safe (one thread uses it, and that thread must outlive the
// child: PR_SET_PDEATHSIG fires when the thread that started it ends). Nothing else in this
// process may wait for the child's pid; SIGCHLD must not be SIG_IGN (the exit status is then
// unknown).
//
// The child's pid stays unreaped (a zombie once it exits) until Stop or the destructor, so that
// signals to its group can never reach an unrelated group that reused the id.
class ChildProcess {
 public:
  // Starts the child: its own process group, PR_SET_PDEATHSIG SIGKILL (and exits at once if this
  // process died before that), default dispositions for every signal and none blocked, stdin from
  // /dev/null, stdout and stderr to pipes, no other inherited descriptors. A program that cannot
  // be run (no such file, not executable) is BadInput "cannot run 'ARGV0': REASON", a working_dir
  // that cannot be entered BadInput "cannot run 'ARGV0' in 'DIR': REASON", a log that cannot be
  // opened Failure; on any error nothing is left running and `child` is untouched.
  static Status Start(const ChildSpec& spec, std::unique_ptr<ChildProcess>* child);

  // SIGKILL to the group unless already reaped, then reaps (blocking, briefly).
  ~ChildProcess();
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Waits up to timeout_ms (>= 0; 0: not at all) for output or the child's exit; appends every
  // complete line read to `lines` (and to the log): split on '\n', a trailing '\r' dropped, a line
  // over 1 MiB cut into 1 MiB pieces; at most 1 MiB is read from each pipe per call. Once the
  // child has exited, what it left in the pipes is drained (a last line without a newline
  // included) and Exited() becomes true; output that programs it left behind write later is not
  // read. Once Exited(), nothing more can arrive and Poll just waits timeout_ms. `lines` may be
  // null: the lines then go to the log only.
  void Poll(int timeout_ms, std::vector<OutputLine>* lines);
  bool Exited() const { return exited_; }
  const ChildExit& exit() const { return exit_; }  // valid once Exited()
  pid_t pid() const { return pid_; }               // also the process group's id

  void Terminate();  // SIGTERM to the process group; no-op once reaped
  void Kill();       // SIGKILL to the process group; no-op once reaped

  // SIGTERM to the group and up to grace_s for the child to exit (its output still read into
  // `lines`); then, whether or not it did, SIGKILL to the group (anything it left behind) and
  // reaps. On return Exited() is true and the child is reaped.
  void Stop(double grace_s, std::vector<OutputLine>* lines);

  // The last lines of stderr (at most 20), joined with '\n'.
  std::string StderrTail() const;

 private:
  ChildProcess() = default;
  void WaitForEvent(int timeout_ms);
  void ReadAvailable(bool from_stderr, std::vector<OutputLine>* lines);
  void EmitLine(std::string text, bool from_stderr, std::vector<OutputLine>* lines);
  void Drain(std::vector<OutputLine>* lines);
  void CollectExit(bool block);
  void KillAndReap();
  void Release();

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  int pid_fd_ = -1;  // readable once the child exits; -1 where the kernel has no pidfd_open
  int log_fd_ = -1;
  std::string log_path_;  // of log_fd_, for the warning when it cannot be written
  std::string out_partial_;
  std::string err_partial_;
  std::deque<std::string> stderr_tail_;
  bool exit_collected_ = false;  // exit_ is known (the pid may still be unreaped)
  bool reaped_ = false;
  bool exited_ = false;  // exit collected and the pipes drained
  ChildExit exit_;
};

}  // namespace hpo
