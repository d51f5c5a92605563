"""What the Python tests that run `hpo` under mpirun share: the environment mpirun needs here, the
command line (`--hpo PATH` plus unittest's own arguments), and a run that cleans up after itself."""

import argparse
import os
import signal
import subprocess
import sys

# Root in containers and CI, more ranks than cores, one thread per rank.
MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "OMP_NUM_THREADS": "1",
}


def parse_command_line():
    """(absolute path of --hpo, argv for unittest.main) from sys.argv."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--hpo", required=True)
    args, rest = parser.parse_known_args()
    return os.path.abspath(args.hpo), [sys.argv[0]] + rest


class RunResult:
    """What run_in_own_session saw: returncode (None when it timed out), output (stdout and
    stderr together), and on a time-out the processes it killed (`ps` lines)."""

    def __init__(self, returncode, output, killed=""):
        self.returncode = returncode
        self.output = output
        self.killed = killed

    def describe(self):
        if self.returncode is not None:
            return self.output
        return "timed out; killed:\n%s\noutput so far:\n%s" % (self.killed, self.output)


def run_in_own_session(argv, timeout, cwd=None, env=None):
    """Runs argv (e.g. mpirun ...) in a session of its own and waits up to `timeout` seconds. On a
    time-out every process of that session is listed and killed, so no rank outlives the test."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               cwd=cwd, env=env, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
        return RunResult(process.returncode, output)
    except subprocess.TimeoutExpired:
        listing = subprocess.run(["ps", "-s", str(process.pid), "-o", "pid,stat,wchan:24,etime,args"],
                                 capture_output=True, text=True).stdout
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        output, _ = process.communicate()
        return RunResult(None, output, listing)
