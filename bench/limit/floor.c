/* The spawn floor: the least a C program does to run `bash -c true` behind a PTY and
 * see it end. forkpty (openpty + fork + setsid + the slave as the controlling terminal
 * and stdio), exec, read the master to EOF (EIO once the slave's last holder is gone),
 * waitpid. Nothing else: no output kept, no files, no event loop.
 *
 * Usage: floor <count>   prints {"samples":[ms,...]} (one per spawn, after one warm-up)
 *        floor --serve   one spawn per line read on stdin, its ms printed as a line
 *                        (after one warm-up), until EOF: for a caller that takes turns
 *                        with it spawn by spawn (bench/spawn-floor.mjs --alternate)
 * Built by the bench (bench/run.mjs, bench/spawn-floor.mjs) with `cc -O2 ... -lutil`. */
#define _GNU_SOURCE
#include <errno.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* One spawn to exit; returns its time in ms, or a negative number on a failure. */
static double one(void) {
  static char buf[65536];
  struct winsize size = {.ws_row = 24, .ws_col = 80};
  double t0 = now_ms();
  int master;
  pid_t pid = forkpty(&master, NULL, NULL, &size);
  if (pid < 0) return -1;
  if (pid == 0) {
    char *argv[] = {"bash", "-c", "true", NULL};
    execve("/bin/bash", argv, environ);
    _exit(127);
  }
  for (;;) {
    ssize_t n = read(master, buf, sizeof buf);
    if (n > 0) continue;
    if (n < 0 && errno == EINTR) continue;
    break; /* 0 or EIO: every slave is closed */
  }
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  close(master);
  return now_ms() - t0;
}

static int failed(void) {
  fprintf(stderr, "floor: forkpty failed\n");
  return 1;
}

/* Spawns on demand: a line in, one spawn's ms out, flushed at once. */
static int serve(void) {
  char line[64];
  if (one() < 0) return failed();
  while (fgets(line, sizeof line, stdin)) {
    double ms = one();
    if (ms < 0) return failed();
    printf("%.4f\n", ms);
    fflush(stdout);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--serve") == 0) return serve();
  int count = argc > 1 ? atoi(argv[1]) : 100;
  if (count < 1 || one() < 0) return failed();
  printf("{\"samples\":[");
  for (int i = 0; i < count; i++) {
    double ms = one();
    if (ms < 0) return failed();
    printf(i ? ",%.4f" : "%.4f", ms);
  }
  printf("]}\n");
  return 0;
}
