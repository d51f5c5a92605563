"""task: torchscript under mpirun: a TorchScript module scripted here by Debian's python3-torch (the
same 1.13 as libtorch) trained by hpo's DDP trainer on .npy and HDF5 data. Run by ctest as:
python3 test_torchscript_task.py --hpo PATH [-k SUITE].

Skips (exit 0 with a message) when /usr/bin/python3 lacks torch, numpy or h5py.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from hpo_test_support import MPI_ENV, parse_command_line, run_in_own_session

HPO = None  # set from the command line
PYTHON = "/usr/bin/python3"

# Data: y = [x0 + x1 * x2 > 0]; 500 training and 100 test samples (no validation split: hpo
# carves one). Models: an MLP of hidden width W (net_wW.pt), one that expects 5 features, one
# with 3 outputs for 2 classes, and a plain tensor saved with torch.save (not a module).
MAKE = r"""
import sys, numpy as np, torch, h5py
folder = sys.argv[1]
rng = np.random.default_rng(0)
x = rng.normal(size=(600, 8)).astype(np.float32)
y = (x[:, 0] + x[:, 1] * x[:, 2] > 0).astype(np.int64)
np.save(folder + "/npy/train_x.npy", x[:500]); np.save(folder + "/npy/train_y.npy", y[:500])
np.save(folder + "/npy/test_x.npy", x[500:]); np.save(folder + "/npy/test_y.npy", y[500:])
with h5py.File(folder + "/data.h5", "w") as f:
    f["train/x"] = x[:500]; f["train/y"] = y[:500]; f["test/x"] = x[500:]; f["test/y"] = y[500:]
with h5py.File(folder + "/no_train.h5", "w") as f:
    f["test/x"] = x[500:]; f["test/y"] = y[500:]
class Net(torch.nn.Module):
    def __init__(self, inputs: int, width: int, outputs: int):
        super().__init__()
        self.hidden = torch.nn.Linear(inputs, width)
        self.out = torch.nn.Linear(width, outputs)
    def forward(self, x):
        return self.out(torch.tanh(self.hidden(x)))
torch.manual_seed(0)
for width in (8, 32):
    torch.jit.save(torch.jit.script(Net(8, width, 2)), folder + "/net_w%d.pt" % width)
torch.jit.save(torch.jit.script(Net(5, 8, 2)), folder + "/five_features.pt")
torch.jit.save(torch.jit.script(Net(8, 8, 3)), folder + "/three_outputs.pt")
torch.save(torch.zeros(3), folder + "/tensor.pt")
"""


def config(model="net_w{width}.pt", data="npy", widths="[8, 32]", ranks_per_trial=1,
           extra=""):
    width = "    width: {values: %s}\n" % widths if "{width}" in model else ""
    return ("sweep:\n"
            "  method: grid\n"
            "  metric: {name: val_loss, goal: minimize}\n"
            "  parameters:\n"
            "%s"
            "    lr: {value: 0.05}\n"
            "    batch_size: {value: 40}\n"
            "    optimizer: {value: sgd}\n"
            "task: torchscript\n"
            "model: %s\n"
            "data: %s\n"
            "epochs: 3\n"
            "ranks_per_trial: %d\n"
            "seed: 5\n%s") % (width, model, data, ranks_per_trial, extra)


class TorchScriptCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="hpo-torchscript-")
        os.makedirs(os.path.join(cls.tmp, "npy"))
        if subprocess.run([PYTHON, "-c", "import torch, numpy, h5py"]).returncode != 0:
            shutil.rmtree(cls.tmp, ignore_errors=True)
            raise unittest.SkipTest(PYTHON + " lacks torch, numpy or h5py")
        script = os.path.join(cls.tmp, "make.py")  # torch.jit.script reads the class's source
        with open(script, "w") as f:
            f.write(MAKE)
        made = subprocess.run([PYTHON, script, cls.tmp], capture_output=True, text=True)
        if made.returncode != 0:
            shutil.rmtree(cls.tmp, ignore_errors=True)
            raise RuntimeError("scripting the test models failed:\n" + made.stderr)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def sweep(self, np_count, name, text):
        path = os.path.join(self.tmp, name + ".yaml")
        with open(path, "w") as f:
            f.write(text)
        output = os.path.join(self.tmp, "out-" + name)
        shutil.rmtree(output, ignore_errors=True)
        done = run_in_own_session(["mpirun", "--oversubscribe", "-np", str(np_count), HPO,
                                   "sweep", "--config", path, "--output", output],
                                  timeout=300, cwd=self.tmp, env=dict(os.environ, **MPI_ENV))
        return done.returncode, done.describe(), output


class Training(TorchScriptCase):
    def test_two_ranks_per_trial_match_one_rank_with_the_same_global_batch(self):
        import h5py
        curves = {}
        for np_count, ranks in ((4, 2), (1, 1)):
            rc, log, output = self.sweep(np_count, "match-%d" % ranks,
                                         config(ranks_per_trial=ranks))
            self.assertEqual(rc, 0, log)
            with h5py.File(os.path.join(output, "study.h5"), "r") as f:
                rows = f["curves"][:]
                trials = f["trials"][:]
                self.assertTrue(all(s == b"completed" for s in trials["status"]), trials)
                curves[ranks] = {(int(r["trial_id"]), int(r["epoch"])): float(r["val_loss"])
                                 for r in rows}
                self.assertIn("test_confusion", f, list(f))
                self.assertEqual(f["test_confusion"][:].sum(), 100)
                self.assertIn("test_macro_f1", f.attrs)
                best = f.attrs["best_model"]
                best = best.decode() if isinstance(best, bytes) else best
                best_width = int(trials[trials["trial_id"] == f.attrs["best_trial_id"]]["width"][0])
            # The best model is TorchScript again, with the best trial's width.
            check = subprocess.run(
                [PYTHON, "-c", "import sys, torch; m = torch.jit.load(sys.argv[1]);"
                 " print(m.hidden.weight.shape[0])", best], capture_output=True, text=True)
            self.assertEqual(check.stdout.strip(), str(best_width), check.stderr)
        self.assertEqual(sorted(curves[1]), sorted(curves[2]))
        for key, loss in curves[1].items():
            self.assertAlmostEqual(curves[2][key], loss, places=5, msg=str(key))

    def test_hdf5_data_trains_like_npy_data(self):
        import h5py
        losses = []
        for data in ("npy", "data.h5"):
            rc, log, output = self.sweep(2, "data-" + data.replace(".", "-"),
                                         config(data=data, widths="[8]"))
            self.assertEqual(rc, 0, log)
            with h5py.File(os.path.join(output, "study.h5"), "r") as f:
                losses.append([float(r["val_loss"]) for r in f["curves"][:]])
        self.assertEqual(losses[0], losses[1])


class BadInput(TorchScriptCase):
    def assert_bad(self, name, text, expected):
        rc, log, output = self.sweep(2, name, text)
        self.assertEqual(rc, 2, log)
        self.assertIn(expected, log)
        self.assertFalse(os.path.exists(os.path.join(output, "study.h5")), log)

    def test_a_file_that_is_not_a_module(self):
        self.assert_bad("tensor", config(model="tensor.pt", widths="[8]"),
                        "tensor.pt: not a TorchScript module")

    def test_a_forward_that_fails_on_the_first_batch_names_the_shape(self):
        self.assert_bad("five", config(model="five_features.pt", widths="[8]"),
                        "forward failed on a batch of the data's inputs, shape [2, 8]")

    def test_outputs_that_do_not_fit_the_labels(self):
        self.assert_bad("three", config(model="three_outputs.pt", widths="[8]"),
                        "is not [2, 2] (batch, classes)")

    def test_a_placeholder_that_is_no_parameter(self):
        self.assert_bad("depth", config(model="net_w{depth}.pt"),
                        "model: {depth} is not a parameter of the sweep")

    def test_a_placeholder_whose_parameter_is_conditional(self):
        text = config(widths="[8]").replace(
            "    lr: {value: 0.05}\n", "    lr: {value: 0.05}\n    kind: {values: [a, b]}\n")
        self.assert_bad("conditional", text + "conditions:\n  width: {kind: [a]}\n",
                        "model: {width} exists only in some trials (conditions:)")

    def test_a_model_file_the_sweep_would_name_is_missing(self):
        self.assert_bad("missing", config(widths="[8, 16]"), "net_w16.pt does not exist")

    def test_hdf5_without_train_x(self):
        self.assert_bad("no-train", config(data="no_train.h5", widths="[8]"),
                        "no_train.h5: no dataset train/x")


if __name__ == "__main__":
    HPO, argv = parse_command_line()
    sys.dont_write_bytecode = True
    unittest.main(argv=argv, verbosity=2)
