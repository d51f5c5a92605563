"""The one failure policy for a failed MPI or NCCL call (FailCollectiveCall in
hpo/mpi/communicator.hpp): the job ends with exit code 1 and one message naming the call, from the
rank it failed on; not an exception (which would end the rank with SIGABRT, or be taken by the
trainer for a trial's failure) nor MPI's own error handler. Run by ctest as:
python3 test_failed_call.py --program PATH (programs/failed_mpi_call.cpp)."""

import argparse
import os
import sys
import unittest

from hpo_test_support import MPI_ENV, run_in_own_session

PROGRAM = None  # set from the command line


class FailedMpiCall(unittest.TestCase):
    def test_a_failed_call_on_one_rank_ends_the_job_with_exit_code_1(self):
        done = run_in_own_session(["mpirun", "--oversubscribe", "-np", "2", PROGRAM], 120,
                                  env=dict(os.environ, **MPI_ENV))
        log = done.describe()
        self.assertEqual(done.returncode, 1, log)
        self.assertIn("hpo: error on rank 1: MPI call MPI_Send(&payload, 1, MPI_INT, world.size(), "
                      "0, duplicate.get()) failed at ", log)
        self.assertIn("failed_mpi_call.cpp:", log)
        self.assertIn("MPI_ERR_RANK", log)
        self.assertIn("hpo: ending the job with exit code 1", log)
        self.assertEqual(log.count("hpo: error"), 1, log)


def main():
    global PROGRAM
    parser = argparse.ArgumentParser()
    parser.add_argument("--program", required=True)
    args, rest = parser.parse_known_args()
    PROGRAM = os.path.abspath(args.program)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
