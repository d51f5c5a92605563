/* Stamps the sleeping trials of build/bench/hpo_bench_dispatch for bench/peers/_overhead.py, which
 * preloads it into the ranks (LD_PRELOAD): every nanosleep or clock_nanosleep of at least 50 ms
 * (the trials sleep 0.1-1 s; nothing else in the ranks sleeps that long) appends `START END`
 * (wall-clock seconds) to $HPO_OVERHEAD_STAMPS once it returns, as _trial_program.py does around
 * its time.sleep. Build: cc -shared -fPIC -O2 -o stamps.so _overhead_sleep_stamps.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static const long kMinNanoseconds = 50L * 1000 * 1000;

static double Now(void) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

static int Stamped(const struct timespec* request) {
  return request->tv_sec > 0 || request->tv_nsec >= kMinNanoseconds;
}

static void Append(double start, double end) {
  const char* path = getenv("HPO_OVERHEAD_STAMPS");
  if (path == NULL) return;
  char line[64];
  const int length = snprintf(line, sizeof line, "%.6f %.6f\n", start, end);
  const int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  if (write(fd, line, (size_t)length) != length) perror("overhead_sleep_stamps");
  close(fd);
}

int nanosleep(const struct timespec* request, struct timespec* remaining) {
  static int (*real)(const struct timespec*, struct timespec*);
  if (real == NULL) real = dlsym(RTLD_NEXT, "nanosleep");
  if (!Stamped(request)) return real(request, remaining);
  const double start = Now();
  const int result = real(request, remaining);
  Append(start, Now());
  return result;
}

int clock_nanosleep(clockid_t clock, int flags, const struct timespec* request,
                    struct timespec* remaining) {
  static int (*real)(clockid_t, int, const struct timespec*, struct timespec*);
  if (real == NULL) real = dlsym(RTLD_NEXT, "clock_nanosleep");
  if (flags != 0 || !Stamped(request)) return real(clock, flags, request, remaining);
  const double start = Now();
  const int result = real(clock, flags, request, remaining);
  Append(start, Now());
  return result;
}
