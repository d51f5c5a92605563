"""Reads the result lines of bench/peers/ and decides the issue's goals from them.

Every measurement of the peers benchmark is one line `bench=NAME key=value ... check=ok|FAILED`
(the harness format of bench/harness.hpp), with NAME one of:
  peer_overhead  system, version, workload, trials, concurrency, wall_s, steady_s, busy_s,
                 idle_share, steady_idle_share, trials_per_s
  peer_quality   system, version, function, seed, best_at_25, best_at_50, best_at_100, seconds
  peer_target    system, version, target, seed, epochs, reached, trials (hpo's replay: resumes)
Systems whose name starts with `hpo_` are hpo's; every other system is a peer's.

The goals (issue 35):
  overhead  hpo's idle share of slot time under 1/10 of the best peer's, per workload; in-process
            trials (hpo_builtin) against the peers' in-process trials, command trials
            (hpo_command) against the peers running the same program (*_program).
  quality   per function and budget, the median best over seeds (lower is better): hpo_bayes below
            the best of Optuna's TPE samplers, and hpo_gp ahead of the best of the model-based
            peers (HEBO, SMAC3, Optuna's GPSampler) or within noise of it. Within noise: the two
            medians' notches overlap (McGill, Tukey and Larsen 1978: median +- 1.57 IQR / sqrt(n),
            roughly a 95% test that two medians differ).
  target    per target, the median epochs over seeds (a seed that never reached the target counts
            as infinitely many): hpo's default for bayes + early_terminate (hpo_bayes_stopping) at
            or below every other system's.
A goal whose systems are missing from the log is reported as `unmeasured`, never as met.
"""

import math
import statistics

BUDGETS = (25, 50, 100)
OPTUNA_TPE = ("optuna_tpe", "optuna_tpe_multivariate")
MODEL_PEERS = ("hebo", "smac_hpo", "optuna_gp")
TARGET_DEFAULT = "hpo_bayes_stopping"
NOTCH = 1.57


def parse(text):
    """Result lines of `text` as dicts of strings, in order. Other lines are ignored, and so are
    the peer_goal lines compare.py derives from the results (a recorded log holds them too)."""
    records = []
    for line in text.splitlines():
        words = line.split()
        if not words or not words[0].startswith("bench=") or words[0] == "bench=peer_goal":
            continue
        record = {}
        for word in words:
            key, separator, value = word.partition("=")
            if separator:
                record[key] = value
        records.append(record)
    return records


def ok(record):
    return record.get("check") == "ok"


def failures(records):
    """The lines that say check=FAILED (or lack a check), as `bench system: error` strings."""
    return ["%s %s: %s" % (r.get("bench"), r.get("system", "?"), r.get("error", "check=FAILED"))
            for r in records if not ok(r)]


def versions(records):
    """system -> the version its lines name (the last one seen)."""
    return {r["system"]: r.get("version", "?") for r in records if "system" in r}


def notch(values):
    """Half-width of the median's notch: 1.57 IQR / sqrt(n)."""
    if len(values) < 2:
        return math.inf
    quartiles = statistics.quantiles(values, n=4, method="inclusive")
    return NOTCH * (quartiles[2] - quartiles[0]) / math.sqrt(len(values))


class Cell:
    """The values of one system in one cell of a table: their median and notch."""

    def __init__(self, values):
        self.values = sorted(values)
        self.median = statistics.median(self.values) if self.values else math.nan
        self.notch = notch(self.values)

    def __len__(self):
        return len(self.values)


def _cells(records, bench, cells_of):
    """cell -> system -> Cell, from the check=ok lines of `bench`; cells_of(record) gives the
    record's (cell, value) pairs."""
    values = {}
    for r in records:
        if r.get("bench") != bench or not ok(r):
            continue
        for cell, value in cells_of(r):
            values.setdefault(cell, {}).setdefault(r["system"], []).append(value)
    return {cell: {system: Cell(v) for system, v in systems.items()}
            for cell, systems in values.items()}


def quality_cells(records):
    """(function, budget) -> system -> Cell of best values over seeds."""
    return _cells(records, "peer_quality", lambda r: [
        ((r["function"], budget), float(r["best_at_%d" % budget]))
        for budget in BUDGETS if "best_at_%d" % budget in r])


def target_cells(records):
    """target -> system -> Cell of epochs over seeds; a seed that did not reach it is inf."""
    return _cells(records, "peer_target", lambda r: [
        (r["target"], float(r["epochs"]) if r.get("reached") == "1" else math.inf)])


def overhead_cells(records):
    """workload -> system -> Cell of idle shares (one per repetition)."""
    return _cells(records, "peer_overhead", lambda r: [(r["workload"], float(r["idle_share"]))])


def best_of(systems, names):
    """(name, Cell) of the lowest median among `names` present in `systems`, or None."""
    present = [(systems[name].median, name) for name in names if name in systems]
    if not present:
        return None
    name = min(present)[1]
    return name, systems[name]


class Verdict:
    """One goal in one cell: `met`, `missed` or `unmeasured`, and the figures behind it."""

    def __init__(self, comparison, cell, goal, outcome, detail):
        self.comparison = comparison
        self.cell = cell
        self.goal = goal
        self.outcome = outcome
        self.detail = detail

    def line(self):
        return "bench=peer_goal comparison=%s cell=%s goal=%s outcome=%s %s" % (
            self.comparison, self.cell, self.goal, self.outcome, self.detail)


def quality_verdicts(records):
    verdicts = []
    for (function, budget), systems in sorted(quality_cells(records).items()):
        cell = "%s@%d" % (function, budget)
        tpe = best_of(systems, OPTUNA_TPE)
        if "hpo_bayes" not in systems or tpe is None:
            verdicts.append(Verdict("quality", cell, "bayes_beats_tpe", "unmeasured", ""))
        else:
            hpo = systems["hpo_bayes"]
            verdicts.append(Verdict(
                "quality", cell, "bayes_beats_tpe",
                "met" if hpo.median < tpe[1].median else "missed",
                "hpo_bayes=%.6g best_tpe=%s:%.6g" % (hpo.median, tpe[0], tpe[1].median)))
        model = best_of(systems, MODEL_PEERS)
        if "hpo_gp" not in systems or model is None:
            verdicts.append(Verdict("quality", cell, "gp_matches_best_model", "unmeasured", ""))
            continue
        hpo, (peer, best) = systems["hpo_gp"], model
        within = hpo.median - best.median <= hpo.notch + best.notch
        verdicts.append(Verdict(
            "quality", cell, "gp_matches_best_model", "met" if within else "missed",
            "hpo_gp=%.6g best_model=%s:%.6g noise=%.3g" %
            (hpo.median, peer, best.median, hpo.notch + best.notch)))
    return verdicts


def target_verdicts(records):
    verdicts = []
    for target, systems in sorted(target_cells(records).items()):
        others = [name for name in systems if name != TARGET_DEFAULT]
        best = best_of(systems, others)
        if TARGET_DEFAULT not in systems or best is None:
            verdicts.append(Verdict("target", target, "default_is_best", "unmeasured", ""))
            continue
        hpo = systems[TARGET_DEFAULT]
        verdicts.append(Verdict(
            "target", target, "default_is_best",
            "met" if hpo.median <= best[1].median else "missed",
            "%s=%g best_other=%s:%g" % (TARGET_DEFAULT, hpo.median, best[0], best[1].median)))
    return verdicts


def overhead_verdicts(records):
    verdicts = []
    pairs = (("hpo_builtin", ("ray_tune", "ray_tune_reuse", "optuna")),
             ("hpo_command", ("ray_tune_program", "ray_tune_program_reuse", "optuna_program")))
    for workload, systems in sorted(overhead_cells(records).items()):
        for hpo_name, peers in pairs:
            best = best_of(systems, peers)
            cell = "%s:%s" % (workload, hpo_name)
            if hpo_name not in systems or best is None:
                verdicts.append(Verdict("overhead", cell, "tenth_of_best_peer", "unmeasured", ""))
                continue
            hpo = systems[hpo_name]
            verdicts.append(Verdict(
                "overhead", cell, "tenth_of_best_peer",
                "met" if hpo.median < best[1].median / 10 else "missed",
                "%s=%.4g best_peer=%s:%.4g ratio=%.3g" %
                (hpo_name, hpo.median, best[0], best[1].median,
                 hpo.median / best[1].median if best[1].median > 0 else math.inf)))
    return verdicts


def verdicts(records):
    return overhead_verdicts(records) + quality_verdicts(records) + target_verdicts(records)


def _format(value):
    return "inf" if math.isinf(value) else "%.6g" % value


def markdown(records):
    """The comparison as markdown tables of medians, one per comparison in the records."""
    out = []
    overhead = overhead_cells(records)
    if overhead:
        out.append("| workload | system | idle share of slot time (median) | trials/s |")
        out.append("| --- | --- | --- | --- |")
        rates = {}
        for r in records:
            if r.get("bench") == "peer_overhead" and ok(r):
                rates.setdefault((r["workload"], r["system"]), []).append(float(r["trials_per_s"]))
        for workload, systems in sorted(overhead.items()):
            for system, cell in sorted(systems.items(), key=lambda item: item[1].median):
                out.append("| %s | %s | %.4f | %.3g |" % (
                    workload, system, cell.median, statistics.median(rates[workload, system])))
        out.append("")
    quality = quality_cells(records)
    if quality:
        systems = sorted({s for cell in quality.values() for s in cell})
        out.append("| function | trials | " + " | ".join(systems) + " |")
        out.append("| --- | --- |" + " --- |" * len(systems))
        for (function, budget), cell in sorted(quality.items()):
            out.append("| %s | %d | %s |" % (function, budget, " | ".join(
                _format(cell[s].median) if s in cell else "-" for s in systems)))
        out.append("")
    target = target_cells(records)
    if target:
        systems = sorted({s for cell in target.values() for s in cell})
        out.append("| target | " + " | ".join(systems) + " |")
        out.append("| --- |" + " --- |" * len(systems))
        for value, cell in sorted(target.items()):
            out.append("| %s | %s |" % (value, " | ".join(
                _format(cell[s].median) if s in cell else "-" for s in systems)))
        out.append("")
    return "\n".join(out)
