"""`hpo render` on the command line: bad choices exit 2 with one message naming the option and
write nothing (an existing output file keeps its bytes); good ones write the file atomically.

usage: test_render_cli.py --hpo PATH --root REPO [unittest args]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import yaml

HPO = None
ROOT = None
QUICKSTART = "configs/quickstart.yaml"  # ranks_per_trial 2

# (name, arguments, message pieces): each must exit 2 and leave the output file as it was.
BAD = [
    ("no_kind", [], ["render needs a kind, mpijob or sbatch"]),
    ("unknown_kind", ["helmchart", "--config", QUICKSTART], ["not 'helmchart'"]),
    ("no_config", ["mpijob"], ["config", "required"]),
    ("missing_config", ["mpijob", "--config", "no-such.yaml"], ["no-such.yaml", "cannot read config"]),
    ("bad_config", ["mpijob", "--config", "{dir}/bad.yaml"], ["bad.yaml:1", "task: missing required key"]),
    ("ranks_do_not_fit", ["mpijob", "--config", QUICKSTART, "--slots-per-worker", "3"],
     ["--workers 1 x 3 slots per worker = 3 ranks", "ranks_per_trial 2"]),
    ("name_not_dns1035", ["mpijob", "--config", QUICKSTART, "--name", "Hpo_Sweep"],
     ["--name 'Hpo_Sweep'", "DNS-1035"]),
    ("worker_name_too_long", ["mpijob", "--config", QUICKSTART, "--name", "a" * 54, "--workers", "12"],
     ["worker pod name", "63"]),
    ("unknown_instance", ["mpijob", "--config", QUICKSTART, "--instance-type", "p9.huge"],
     ["--instance-type 'p9.huge'", "p4d.24xlarge"]),
    ("efa_beyond_instance", ["mpijob", "--config", QUICKSTART, "--instance-type", "p4d.24xlarge",
                             "--efa", "8"], ["--efa-per-worker 8", "4 EFA"]),
    ("slots_beyond_shared_gpus", ["mpijob", "--config", "{dir}/shared.yaml", "--gpus-per-worker", "2",
                                  "--slots-per-worker", "9"],
     ["--slots-per-worker 9", "trials_per_gpu 4", "too few GPUs", "--gpus-per-worker 2"]),
    ("workers_not_a_number", ["mpijob", "--config", QUICKSTART, "--workers", "two"], ["workers"]),
    ("sbatch_time", ["sbatch", "--config", QUICKSTART, "--time", "2h"], ["--time '2h'"]),
    ("sbatch_ranks", ["sbatch", "--config", QUICKSTART, "--nodes", "3", "--ntasks-per-node", "1"],
     ["--nodes 3 x 1 tasks per node = 3 ranks", "ranks_per_trial 2"]),
    ("sbatch_signal_lead", ["sbatch", "--config", QUICKSTART, "--preemptible", "--signal-lead", "30"],
     ["--signal-lead 30 s must exceed checkpoint.grace_period_s 60 s"]),
    ("sbatch_launcher", ["sbatch", "--config", QUICKSTART, "--launcher", "aprun"], ["--launcher"]),
    ("unknown_option", ["sbatch", "--config", QUICKSTART, "--gpus", "8"], ["gpus"]),
]


class RenderCli(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="hpo-render-")
        with open(os.path.join(self.dir, "bad.yaml"), "w") as f:
            f.write("epochs: 1\n")
        with open(os.path.join(ROOT, QUICKSTART)) as f:
            quickstart = f.read()
        with open(os.path.join(self.dir, "shared.yaml"), "w") as f:
            f.write(quickstart.replace("ranks_per_trial: 2\n", "ranks_per_trial: 1\ntrials_per_gpu: 4\n"))
        self.out = os.path.join(self.dir, "job.yaml")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def render(self, args):
        args = [a.replace("{dir}", self.dir) for a in args]
        done = subprocess.run([HPO, "render"] + args, cwd=ROOT, capture_output=True, text=True,
                              timeout=60)
        return done.returncode, done.stdout, done.stderr

    def test_bad_choices_write_nothing(self):
        for name, args, pieces in BAD:
            with self.subTest(name):
                with open(self.out, "w") as f:
                    f.write("earlier contents\n")
                code, stdout, stderr = self.render(args + ["--output", self.out])
                self.assertEqual(code, 2, stderr)
                self.assertEqual(stdout, "")
                self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
                self.assertTrue(stderr.startswith("hpo: error: "), stderr)
                for piece in pieces:
                    self.assertIn(piece, stderr)
                with open(self.out) as f:
                    self.assertEqual(f.read(), "earlier contents\n")
                self.assertFalse(os.path.exists(self.out + ".tmp"))

    def test_writes_the_file_or_stdout(self):
        code, stdout, stderr = self.render(["mpijob", "--config", QUICKSTART, "--workers", "2",
                                            "--output", self.out])
        self.assertEqual(code, 0, stderr)
        self.assertEqual(stdout, "")
        with open(self.out) as f:
            written = f.read()
        config_map, job = list(yaml.safe_load_all(written))
        with open(os.path.join(ROOT, QUICKSTART)) as f:
            self.assertEqual(config_map["data"]["sweep.yaml"], f.read())
        self.assertEqual(job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"], 2)
        # The header records the command without --output, so it renders the same text again.
        code, again, _ = self.render(["mpijob", "--config", QUICKSTART, "--workers", "2"])
        self.assertEqual(code, 0)
        self.assertEqual(again, written)
        self.assertTrue(written.startswith(
            "# Rendered by: hpo render mpijob --config configs/quickstart.yaml --workers 2\n"))

    def test_header_quotes_arguments_for_the_shell(self):
        code, stdout, stderr = self.render(["sbatch", "--config", QUICKSTART, "--output-dir",
                                            "runs/my study", "--ntasks-per-node", "4"])
        self.assertEqual(code, 0, stderr)
        self.assertIn("# Rendered by: hpo render sbatch --config configs/quickstart.yaml "
                      "--output-dir 'runs/my study' --ntasks-per-node 4\n", stdout)
        self.assertIn("HPO_DEFAULT_OUTPUT='runs/my study'\n", stdout)
        check = subprocess.run(["bash", "-n"], input=stdout, text=True, capture_output=True)
        self.assertEqual(check.returncode, 0, check.stderr)

    def test_help(self):
        for kind in ("mpijob", "sbatch"):
            code, stdout, _ = self.render([kind, "--help"])
            self.assertEqual(code, 0)
            self.assertIn("--config", stdout)


def main():
    global HPO, ROOT
    parser = argparse.ArgumentParser()
    parser.add_argument("--hpo", required=True)
    parser.add_argument("--root", required=True)
    args, rest = parser.parse_known_args()
    HPO = os.path.abspath(args.hpo)
    ROOT = os.path.abspath(args.root)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
