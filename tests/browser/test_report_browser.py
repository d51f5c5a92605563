#!/usr/bin/env python3
"""The HTML report in a real browser, and its importance against Optuna's.

--case browser: runs four small sweeps under mpirun (a random search of the built-in synthetic
task, which stores a test confusion matrix; bayes + hyperband over a command program with stopped
and failed trials; random search over the same program; the synthetic search over three
objectives, whose page adds the Pareto front), writes `hpo report --html` of each and a
comparison of the second and third, loads every page in headless Chromium with --dump-dom and
checks that every section holds drawn SVG or canvas content (the page's own counts, data-drawn),
that the page caught no script error and that the browser console shows none; a screenshot of
each page goes to --artifacts. Exit 77 (skipped) when Chromium cannot start.

--case optuna: runs a random search over the command program, `hpo report --html` (which stores
the fANOVA importance in the study), and checks that Optuna's FanovaImportanceEvaluator, given the
same completed trials read from the study with h5py, ranks the same hyperparameter first. Exit 77
when optuna, sklearn, h5py or yaml is missing.
"""

import argparse
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "programs", "objective.py")
PYTHON = "/usr/bin/python3"
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")
SKIP = 77

SINGLE_SECTIONS = ["history", "importance", "slices", "contour", "timeline", "parallel", "curves"]


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def command_config(method, run_cap, early="", epochs=4, sleep=0.02, batch="[32]"):
    return ("sweep:\n"
            "  program: %s\n"
            "  method: %s\n"
            "  metric: {name: loss, goal: minimize}\n"
            "  run_cap: %d\n%s"
            "  parameters:\n"
            "    lr: {min: 0.0001, max: 0.1, distribution: log_uniform_values}\n"
            "    width: {min: 8, max: 64, distribution: int_uniform}\n"
            "    optimizer: {values: [sgd, adam, adamw]}\n"
            "    batch: {values: %s}\n"
            "    steps: {value: %d}\n"
            "    sleep: {value: %g}\n"
            "ranks_per_trial: 1\n"
            "interpreter: %s\n"
            "epochs: %d\n"
            "seed: 5\n") % (PROGRAM, method, run_cap, early, batch, epochs, sleep, PYTHON, epochs)


SYNTHETIC_CONFIG = """sweep:
  method: random
  metric: {name: val_loss, goal: minimize}
  run_cap: 9
  parameters:
    lr: {min: 0.001, max: 0.1, distribution: log_uniform_values}
    optimizer: {values: [sgd, adam]}
    width: {values: [16, 32]}
task: synthetic
synthetic: {train_samples: 512, val_samples: 256, test_samples: 256, features: 16, classes: 3}
epochs: 2
ranks_per_trial: 1
seed: 3
"""

# The same search over three objectives: the page adds #pareto, with a choice of the two drawn.
OBJECTIVES_CONFIG = SYNTHETIC_CONFIG.replace(
    "  metric: {name: val_loss, goal: minimize}\n",
    "  metric:\n"
    "    - {name: val_loss, goal: minimize}\n"
    "    - {name: val_accuracy, goal: maximize}\n"
    "    - {name: epoch_time_s, goal: minimize}\n")


def run(argv, timeout, env=None):
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    if done.returncode != 0:
        fail("%s exited %d:\n%s%s" % (" ".join(argv), done.returncode, done.stdout, done.stderr))
    return done


def sweep(hpo, tmp, name, config, ranks=3):
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write(config)
    output = os.path.join(tmp, name)
    run(["mpirun", "--oversubscribe", "-np", str(ranks), hpo, "sweep", "--config", path,
         "--output", output], timeout=300, env=MPI_ENV)
    return os.path.join(output, "study.h5")


def report(hpo, studies, page):
    run([hpo, "report"] + studies + ["--html", page], timeout=120)
    return page


def chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def chromium(browser, args, timeout=90):
    # Virtual time lets the page's deferred drawing (one task per view after the first frame)
    # finish before the DOM is dumped or the screenshot taken.
    argv = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
            "--virtual-time-budget=20000"] + args
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


class Tree(html.parser.HTMLParser):
    """A minimal DOM: (tag, attributes, children) tuples, for finding sections and what they
    hold."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
            "track", "wbr"}

    def __init__(self):
        super().__init__()
        self.root = ("root", {}, [])
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        node = (tag, dict(attrs), [])
        self.stack[-1][2].append(node)
        if tag not in self.VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag, attrs):
        self.stack[-1][2].append((tag, dict(attrs), []))

    def handle_endtag(self, tag):
        for k in range(len(self.stack) - 1, 0, -1):
            if self.stack[k][0] == tag:
                del self.stack[k:]
                return

    def handle_data(self, data):
        if data.strip():
            self.stack[-1][2].append(("#text", {"text": data}, []))


def walk(node):
    yield node
    for child in node[2]:
        yield from walk(child)


def find_id(root, ident):
    return next((n for n in walk(root) if n[1].get("id") == ident), None)


def text_of(node):
    return "".join(n[1]["text"] for n in walk(node) if n[0] == "#text")


def check_pareto(page, section):
    """#pareto of a study of three objectives: a choice of each axis among the three, and the
    caption the script wrote under the plot."""
    for ident in ("pareto-x", "pareto-y"):
        select = find_id(section, ident)
        options = [n for n in walk(select) if n[0] == "option"] if select else []
        if len(options) != 3:
            fail("%s: #pareto has no choice of three objectives for %s" % (page, ident))
    captions = [text_of(n) for n in walk(section) if n[1].get("class") == "figure"]
    if not any(c.startswith("Pareto front over all 3 objectives: ") for c in captions):
        fail("%s: #pareto has no caption of the front over 3 objectives: %s" % (page, captions))


def check_page(browser, page, sections, artifacts, shot_name, height):
    """Loads `page` in Chromium and checks it; returns the time the page took to draw (ms).

    One browser start per page both dumps the DOM and takes the screenshot (Chromium does the
    two in turn, once the virtual time has run out); a start costs about 2 s of CPU."""
    url = "file://" + os.path.abspath(page)
    os.makedirs(artifacts, exist_ok=True)
    shot = os.path.join(artifacts, shot_name)
    if os.path.exists(shot):
        os.remove(shot)  # an earlier run's screenshot is no proof of this one
    done = chromium(browser, ["--window-size=1400,%d" % height, "--dump-dom",
                              "--screenshot=" + shot, url])
    if done.returncode != 0 or "<html" not in done.stdout:
        fail("chromium --dump-dom %s exited %d:\n%s" % (page, done.returncode, done.stderr[-3000:]))
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    if console:
        fail("%s: the browser console shows:\n%s" % (page, "\n".join(console)))
    tree = Tree()
    tree.feed(done.stdout)
    errors = find_id(tree.root, "hpo-errors")
    if errors is None or text_of(errors).strip():
        fail("%s: the page caught script errors: %s" % (page, errors and text_of(errors)))
    html_node = next(n for n in walk(tree.root) if n[0] == "html")
    missing = [a for a in ("data-render-ms", "data-complete-ms") if a not in html_node[1]]
    if missing:
        fail("%s: the script did not finish (no %s)" % (page, " or ".join(missing)))
    for ident in sections:
        section = find_id(tree.root, ident)
        if section is None or section[0] != "section":
            fail("%s: no <section id=%r>" % (page, ident))
        guide = [n for n in walk(section) if n[1].get("class") == "guide"]
        if not guide or not text_of(guide[0]).strip():
            fail("%s: section %s has no reading guide" % (page, ident))
        if ident == "confusion":
            cells = [n for n in walk(section) if n[0] == "td" and text_of(n).strip()]
            if len(cells) < 4:
                fail("%s: the confusion matrix has %d cells" % (page, len(cells)))
            continue
        if ident == "pareto":
            check_pareto(page, section)
        svgs = [n for n in walk(section) if n[0] == "svg"]
        shapes = [n for s in svgs for n in walk(s)
                  if n[0] in ("line", "rect", "path", "polyline", "circle", "text")]
        canvases = [n for n in walk(section) if n[0] == "canvas"]
        drawn = int(section[1].get("data-drawn", "0"))
        if not shapes:
            fail("%s: section %s has no drawn SVG content" % (page, ident))
        if canvases and drawn <= 0:
            fail("%s: section %s drew nothing on its canvas (data-drawn=%d)" % (page, ident, drawn))
        if ident == "importance" and not any(n[1].get("class") == "bar" for n in walk(section)):
            fail("%s: the importance section has no bars:\n%s" % (page, text_of(section)))
    if not os.path.exists(shot):
        fail("no screenshot of %s: %s" % (page, done.stderr[-2000:]))
    return float(html_node[1]["data-render-ms"])


def statuses(study):
    import h5py
    with h5py.File(study, "r") as f:
        return [s.decode() for s in f["trials"]["status"]]


def browser_case(hpo, tmp, artifacts):
    browser = chromium_binary()
    if browser is None:
        print("SKIP: no chromium on the PATH (scripts/install-deps.sh installs it)")
        sys.exit(SKIP)
    probe = chromium(browser, ["--dump-dom", "about:blank"], timeout=60)
    if probe.returncode != 0 or "<html" not in probe.stdout:
        print("SKIP: chromium cannot start here: %s" % probe.stderr[-1000:])
        sys.exit(SKIP)
    synthetic = sweep(hpo, tmp, "random_synthetic", SYNTHETIC_CONFIG)
    # TPE with ASHA by name (bayes + hyperband alone is the curve scheduler, which pauses
    # trials rather than stopping them).
    hyperband = sweep(hpo, tmp, "bayes_hyperband", command_config(
        "bayes", 30, early="  early_terminate: {type: hyperband, min_iter: 1, eta: 3}\n",
        epochs=9, batch="[32, 64, 256]") + "search: {model: tpe}\n")
    random_study = sweep(hpo, tmp, "random", command_config("random", 30, epochs=9,
                                                            batch="[32, 64]"))
    objectives = sweep(hpo, tmp, "objectives_synthetic", OBJECTIVES_CONFIG)
    seen = statuses(hyperband)
    if "stopped" not in seen or "failed" not in seen:
        fail("the hyperband study should have stopped and failed trials: %s" % seen)
    import h5py
    import numpy
    with h5py.File(hyperband, "r") as f:
        starts = f["trials"]["start_time_s"]
        if not numpy.all(numpy.isfinite(starts)) or not numpy.all(starts > 1.6e9):
            fail("every trial of a new study has its start time: %s" % starts)
    pages = [
        (report(hpo, [synthetic], os.path.join(tmp, "random_synthetic.html")),
         SINGLE_SECTIONS + ["confusion"], "random_synthetic.png", 5200),
        (report(hpo, [hyperband], os.path.join(tmp, "bayes_hyperband.html")),
         SINGLE_SECTIONS, "bayes_hyperband.png", 5200),
        (report(hpo, [objectives], os.path.join(tmp, "objectives_synthetic.html")),
         SINGLE_SECTIONS + ["pareto"], "objectives_synthetic.png", 5600),
        (report(hpo, [hyperband, random_study], os.path.join(tmp, "comparison.html")),
         ["comparison"], "comparison.png", 1000),
    ]
    with h5py.File(hyperband, "r") as f:
        stored = json.loads(f.attrs["param_importance"])
    if stored["method"] != "fanova" or not stored["importance"]:
        fail("the study does not hold the importance the report computed: %s" % stored)
    for page, sections, shot, height in pages:
        ms = check_page(browser, page, sections, artifacts, shot, height)
        print("%s: drawn in %.0f ms, screenshot %s" % (os.path.basename(page), ms,
                                                      os.path.join(artifacts, shot)))


def optuna_case(hpo, tmp):
    try:
        import h5py
        import numpy  # noqa: F401
        import optuna
        import sklearn  # noqa: F401
        import yaml
    except ImportError as error:
        print("SKIP: %s (python3-optuna, python3-sklearn, python3-h5py, python3-yaml)" % error)
        sys.exit(SKIP)
    study_path = sweep(hpo, tmp, "random", command_config("random", 48, epochs=2, sleep=0))
    report(hpo, [study_path], os.path.join(tmp, "random.html"))
    with h5py.File(study_path, "r") as f:
        ours = json.loads(f.attrs["param_importance"])
        config = yaml.safe_load(f.attrs["config"])
        rows = f["trials"][:]
    spec = config["sweep"]["parameters"]
    distributions = {}
    for name, p in spec.items():
        if "values" in p:
            distributions[name] = optuna.distributions.CategoricalDistribution(p["values"])
        elif p.get("distribution") == "int_uniform":
            distributions[name] = optuna.distributions.IntDistribution(p["min"], p["max"])
        elif "min" in p:
            distributions[name] = optuna.distributions.FloatDistribution(
                p["min"], p["max"], log=p.get("distribution") == "log_uniform_values")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="minimize")

    def value(name, raw):
        if isinstance(raw, bytes):
            raw = raw.decode()
        choices = getattr(distributions[name], "choices", None)
        if choices is not None:  # the study stores a categorical as its column's type
            return next(c for c in choices if str(c) == str(raw) or c == raw)
        return int(raw) if isinstance(distributions[name],
                                      optuna.distributions.IntDistribution) else float(raw)

    completed = 0
    for row in rows:
        if row["status"].decode() != "completed" or not numpy.isfinite(row["objective"]):
            continue
        params = {name: value(name, row[name]) for name in distributions}
        study.add_trial(optuna.trial.create_trial(params=params, distributions=distributions,
                                                  value=float(row["objective"])))
        completed += 1
    theirs = optuna.importance.get_param_importances(
        study, evaluator=optuna.importance.FanovaImportanceEvaluator(seed=0))
    ours_ranked = [(v["name"], v["importance"]) for v in ours["importance"]]
    print("hpo (C++ fANOVA, %d trials): %s" % (ours["trials"], ours_ranked))
    print("optuna %s FanovaImportanceEvaluator (%d trials): %s" %
          (optuna.__version__, completed, list(theirs.items())))
    if ours["trials"] != completed:
        fail("hpo used %d trials, Optuna %d" % (ours["trials"], completed))
    if ours_ranked[0][0] != next(iter(theirs)):
        fail("the most important hyperparameter differs: hpo %s, Optuna %s" %
             (ours_ranked[0][0], next(iter(theirs))))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hpo", required=True)
    parser.add_argument("--case", choices=["browser", "optuna"], required=True)
    parser.add_argument("--artifacts", default="report-screenshots")
    args = parser.parse_args()
    hpo = os.path.abspath(args.hpo)
    tmp = tempfile.mkdtemp(prefix="hpo_report_browser_")
    try:
        if args.case == "browser":
            browser_case(hpo, tmp, os.path.abspath(args.artifacts))
        else:
            optuna_case(hpo, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("ok")


if __name__ == "__main__":
    main()
