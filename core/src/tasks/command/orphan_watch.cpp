#include "tasks/command/orphan_watch.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <random>
#include <utility>
#include <vector>

namespace hpo {

namespace {

// The watcher ($1: the tag, $2: the grace period in tenths of a second). It reads its stdin (the
// pipe) until a line or the end: "done" means nothing is left; the end alone means the rank died.
// Then SIGTERM to every tagged process, up to the grace period for them to go, and SIGKILL rounds
// until none is found (ten at most: a process that forks faster than that is beyond saving).
// Zombies have an empty environ, so they are not found again.
constexpr char kWatcherScript[] = R"sh(
tag=$1 grace_ticks=$2
IFS= read -r said || said=
[ "$said" = done ] && exit 0
tagged() {
  for file in $(grep -lzx "HPO_PROCESS_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null); do
    pid=${file#/proc/}
    echo "${pid%/environ}"
  done
}
pids=$(tagged)
[ -z "$pids" ] && exit 0
kill -TERM $pids 2>/dev/null
ticks=0
while [ "$ticks" -lt "$grace_ticks" ] && [ -n "$(tagged)" ]; do
  sleep 0.1
  ticks=$((ticks + 1))
done
for round in 1 2 3 4 5 6 7 8 9 10; do
  pids=$(tagged)
  [ -z "$pids" ] && exit 0
  kill -KILL $pids 2>/dev/null
  sleep 0.1
done
)sh";

// Starts `argv` by posix_spawn with fd 3 the pipe's read end, stdin, stdout and stderr /dev/null,
// no other descriptor, default signal dispositions and mask; waits for it to exit.
Status SpawnAndWait(const std::vector<std::string>& argv, int read_fd) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, read_fd, 3);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclosefrom_np(&actions, 4);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t all;
  sigfillset(&all);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  char path_entry[] = "PATH=/usr/bin:/bin";
  char* environment[] = {path_entry, nullptr};
  pid_t pid = -1;
  const int error =
      posix_spawn(&pid, argv[0].c_str(), &actions, &attributes, args.data(), environment);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (error != 0) {
    return Status::Failure("cannot start the orphan watch (" + argv[0] + "): " + strerror(error));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return Status::Ok();
}

std::string NewTag() {
  std::random_device device;
  char text[64];
  std::snprintf(text, sizeof(text), "%d-%08x%08x", static_cast<int>(getpid()), device(), device());
  return text;
}

}  // namespace

Status OrphanWatch::Start(double grace_s, std::unique_ptr<OrphanWatch>* watch) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return Status::Failure(std::string("cannot start the orphan watch: pipe: ") + strerror(errno));
  }
  const std::string tag = NewTag();
  const long grace_ticks = std::lround(std::max(grace_s, 0.0) * 10.0);
  // A shell that starts the watcher in the background and exits: the watcher, re-parented away
  // from this process, is no descendant of it. Its stdin is fd 3, the pipe (a background job's
  // stdin is /dev/null unless redirected).
  const std::vector<std::string> argv = {
      "/bin/sh",
      "-c",
      "/bin/sh -c \"$1\" hpo-orphan-watch \"$2\" \"$3\" <&3 3<&- &",
      "hpo-orphan-watch-start",
      kWatcherScript,
      tag,
      std::to_string(grace_ticks)};
  const Status started = SpawnAndWait(argv, fds[0]);
  close(fds[0]);
  if (!started.ok()) {
    close(fds[1]);
    return started;
  }
  watch->reset(new OrphanWatch(fds[1], tag));
  return Status::Ok();
}

OrphanWatch::~OrphanWatch() {
  const char done[] = "done\n";
  (void)!write(pipe_fd_, done, sizeof(done) - 1);
  close(pipe_fd_);
}

}  // namespace hpo
