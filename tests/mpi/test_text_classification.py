"""task: text_classification under mpirun, on small TSV files this test writes: a 3-class review
corpus (labels -1, 0, 1 as in a sentiment data set) whose class is told by a few cue words among
random filler; and (RealCorpus) on the real 20 Newsgroups corpus that scripts/install-deps.sh
fetches into data/20newsgroups, skipped when it is not there. Run by ctest as:
python3 test_text_classification.py --hpo PATH [-k SUITE].

The best model file is read back with Debian's python3-torch when /usr/bin/python3 has torch and
h5py; the test skips (exit 0 with a message) when it has no h5py.
"""

import csv
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest

from hpo_test_support import MPI_ENV, parse_command_line, run_in_own_session

HPO = None  # set from the command line
PYTHON = "/usr/bin/python3"

CUES = {"-1": ["awful", "broken", "refund", "worst"],
        "0": ["okay", "average", "fine", "ordinary"],
        "1": ["great", "excellent", "love", "perfect"]}
FILLER = ["the", "a", "it", "was", "product", "delivery", "box", "we", "got", "this", "i",
          "and", "for", "my", "with", "colour", "size", "price", "\"quoted\"", "arrived"]


def write_split(path, rows, label_column="label"):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, delimiter="\t", lineterminator="\n")
        writer.writerow(["id", "text", label_column])
        for index, (text, label) in enumerate(rows):
            writer.writerow([index, text, label])


def make_rows(count, rng, labels=("-1", "0", "1")):
    rows = []
    for _ in range(count):
        label = rng.choice(labels)
        words = [rng.choice(FILLER) for _ in range(rng.randint(4, 14))]
        words.insert(rng.randint(0, len(words)), rng.choice(CUES[label] if label in CUES else
                                                            ["strange"]))
        rows.append((" ".join(words).capitalize() + rng.choice([".", "!", "?"]), label))
    return rows


def config(train="train.tsv", test="test.tsv", extra_text="", ranks_per_trial=2,
           parameters=""):
    return ("sweep:\n"
            "  method: grid\n"
            "  metric: {name: val_accuracy, goal: maximize}\n"
            "  parameters:\n"
            "    pooling: {values: [mean, cls]}\n"
            "    lr: {value: 0.003}\n"
            "    batch_size: {value: 32}\n"
            "    optimizer: {value: adamw}\n"
            "    warmup_ratio: {value: 0.1}\n"
            "    layers: {value: 1}\n"
            "    d_model: {value: 32}\n"
            "    heads: {value: 2}\n"
            "    ff_dim: {value: 64}\n"
            "    dropout: {value: 0.0}\n"
            "    max_seq_length: {value: 24}\n"
            "%s"
            "task: text_classification\n"
            "text:\n"
            "  train: %s\n"
            "  test: %s\n"
            "%s"
            "epochs: 4\n"
            "ranks_per_trial: %d\n"
            "seed: 11\n") % (parameters, train, test, extra_text, ranks_per_trial)


class TextCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="hpo-text-")
        rng = random.Random(3)
        write_split(os.path.join(cls.tmp, "train.tsv"), make_rows(600, rng))
        write_split(os.path.join(cls.tmp, "test.tsv"), make_rows(150, rng))
        write_split(os.path.join(cls.tmp, "test_new_label.tsv"),
                    make_rows(20, rng) + [("a strange thing", "2")])
        write_split(os.path.join(cls.tmp, "sentiment.tsv"), make_rows(50, rng),
                    label_column="sentiment")

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
                                  timeout=400, cwd=self.tmp, env=dict(os.environ, **MPI_ENV))
        return done.returncode, done.describe(), output


class Training(TextCase):
    def test_two_rank_trials_learn_the_cues_and_store_the_confusion_matrix(self):
        try:
            import h5py
        except ImportError:
            self.skipTest("python3 has no h5py")
        rc, log, output = self.sweep(4, "train", config())
        self.assertEqual(rc, 0, log)
        study = os.path.join(output, "study.h5")
        with h5py.File(study, "r") as f:
            trials = f["trials"][:]
            self.assertTrue(all(s == b"completed" for s in trials["status"]), trials)
            pooling = sorted(p.decode() for p in trials["pooling"])
            self.assertEqual(pooling, ["cls", "mean"])
            # Both poolings learn the cue words; validation is carved from train (60 rows).
            for row in f["curves"][:]:
                if int(row["epoch"]) == 3:
                    self.assertGreater(float(row["val_accuracy"]), 0.9, row)
            confusion = f["test_confusion"][:]
            labels = [l.decode() if isinstance(l, bytes) else l
                      for l in f["test_confusion"].attrs["labels"]]
            self.assertEqual(labels, ["-1", "0", "1"])
            self.assertEqual(confusion.shape, (3, 3))
            self.assertEqual(confusion.sum(), 150)
            self.assertGreater(confusion.trace() / 150, 0.9)
            self.assertAlmostEqual(float(f.attrs["test_accuracy"]), confusion.trace() / 150,
                                   places=6)
            self.assertGreater(float(f.attrs["test_macro_f1"]), 0.9)
            best = f.attrs["best_model"]
            best = best.decode() if isinstance(best, bytes) else best
        report = subprocess.run([HPO, "report", study], capture_output=True, text=True)
        self.assertEqual(report.returncode, 0, report.stderr)
        self.assertIn("confusion", report.stdout)
        self.assertIn("test accuracy", report.stdout.replace("_", " "))
        # The best model carries the vocabulary and the classes for whoever reuses it.
        check = subprocess.run(
            [PYTHON, "-c", "import sys, torch; m = torch.jit.load(sys.argv[1]);"
             " print(list(m.vocabulary[:3]), list(m.classes), 'great' in m.vocabulary)", best],
            capture_output=True, text=True)
        if "No module named 'torch'" not in check.stderr:
            self.assertEqual(check.stdout.strip(),
                             "['[PAD]', '[UNK]', '[CLS]'] ['-1', '0', '1'] True", check.stderr)


NEWSGROUPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data",
                          "20newsgroups")


class RealCorpus(TextCase):
    def test_one_epoch_on_20_newsgroups_learns_far_above_chance(self):
        """configs/newsgroups_text.yaml's text section with a small model, one trial of one epoch
        on 2 ranks: 20 groups, so chance is 5%; a working classifier is far above it."""
        try:
            import h5py
        except ImportError:
            self.skipTest("python3 has no h5py")
        if not os.path.exists(os.path.join(NEWSGROUPS, "train.tsv")):
            self.skipTest("no corpus in %s: scripts/install-deps.sh fetches it" % NEWSGROUPS)
        text = ("  validation: %s\n  format: tsv\n  text_column: text\n  label_column: label\n"
                "  min_count: 2\n  max_vocab: 30000\n" % os.path.join(NEWSGROUPS, "validation.tsv"))
        sweep = config(train=os.path.join(NEWSGROUPS, "train.tsv"),
                       test=os.path.join(NEWSGROUPS, "test.tsv"), extra_text=text)
        sweep = (sweep.replace("    pooling: {values: [mean, cls]}", "    pooling: {value: mean}")
                 .replace("max_seq_length: {value: 24}", "max_seq_length: {value: 128}")
                 .replace("epochs: 4", "epochs: 1"))
        rc, log, output = self.sweep(2, "newsgroups", sweep)
        self.assertEqual(rc, 0, log)
        with h5py.File(os.path.join(output, "study.h5"), "r") as f:
            trials = f["trials"][:]
            self.assertEqual([s for s in trials["status"]], [b"completed"], log)
            self.assertGreater(float(trials["objective"][0]), 0.3, log)  # val_accuracy
            self.assertEqual(f["test_confusion"].shape, (20, 20))
            self.assertEqual(int(f["test_confusion"][:].sum()), 7528)
            self.assertGreater(float(f.attrs["test_accuracy"]), 0.3)


class BadInput(TextCase):
    def assert_bad(self, name, text, expected):
        rc, log, output = self.sweep(2, name, text)
        self.assertEqual(rc, 2, log)
        self.assertIn(expected, log)
        self.assertFalse(os.path.exists(os.path.join(output, "study.h5")), log)

    def test_a_missing_label_column_names_the_file_and_its_columns(self):
        self.assert_bad("column", config(train="sentiment.tsv", ranks_per_trial=1),
                        "sentiment.tsv: no column 'label'")

    def test_a_label_only_in_the_test_split_names_its_line(self):
        self.assert_bad("new-label", config(test="test_new_label.tsv", ranks_per_trial=1),
                        "test_new_label.tsv:22: label '2' is not a label of the training split")

    def test_a_missing_file_names_the_key(self):
        self.assert_bad("missing", config(test="nowhere.tsv", ranks_per_trial=1),
                        ":19: text.test: ")

    def test_an_unknown_key_in_the_text_section(self):
        self.assert_bad("unknown", config(extra_text="  lowercase: true\n", ranks_per_trial=1),
                        ":20: text.lowercase: unknown key")

    def test_an_unknown_hyperparameter(self):
        self.assert_bad("hyper", config(parameters="    hidden: {value: 3}\n",
                                        ranks_per_trial=1), "hidden")


if __name__ == "__main__":
    HPO, argv = parse_command_line()
    sys.dont_write_bytecode = True
    unittest.main(argv=argv, verbosity=2)
