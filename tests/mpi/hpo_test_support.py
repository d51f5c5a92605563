"""What the Python tests that run `hpo` under mpirun share: the environment mpirun needs here and
the command line (`--hpo PATH` plus unittest's own arguments)."""

import argparse
import os
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
