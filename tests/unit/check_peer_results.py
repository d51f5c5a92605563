#!/usr/bin/env python3
"""The peers benchmark's result parsing and goal decisions (bench/peers/_results.py, compare.py)
on a recorded log, tests/unit/data/peers/recorded.log, with every expected figure worked out by
hand from its lines. The peers themselves never run here.

    check_peer_results.py REPO_ROOT
"""

import math
import os
import subprocess
import sys
import unittest

ROOT = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else os.getcwd()
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))

import _results  # noqa: E402

LOG = os.path.join(ROOT, "tests", "unit", "data", "peers", "recorded.log")


def outcomes(verdicts):
    return {(v.comparison, v.cell, v.goal): v.outcome for v in verdicts}


class PeerResultsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(LOG) as f:
            cls.records = _results.parse(f.read())

    def test_parses_only_result_lines_into_their_fields(self):
        # The log's last line is a peer_goal line of an earlier summary: derived, not a result.
        self.assertEqual(len(self.records), 36)
        first = self.records[0]
        self.assertEqual(first["bench"], "peer_overhead")
        self.assertEqual(first["system"], "hpo_command")
        self.assertEqual(first["idle_share"], "0.01250")
        self.assertEqual(_results.versions(self.records)["hebo"], "hebo-0.3.6")

    def test_failed_lines_are_reported_and_left_out_of_the_medians(self):
        self.assertEqual(_results.failures(self.records),
                         ["peer_quality smac_hpo: ValueError:_bad_bounds"])
        self.assertNotIn("smac_hpo", _results.quality_cells(self.records)[("branin", 50)])

    def test_quality_medians_per_function_and_budget(self):
        cells = _results.quality_cells(self.records)
        self.assertAlmostEqual(cells[("branin", 25)]["hpo_bayes"].median, 0.52)
        self.assertAlmostEqual(cells[("branin", 50)]["optuna_tpe"].median, 0.55)
        self.assertAlmostEqual(cells[("branin", 100)]["optuna_tpe_multivariate"].median, 0.405)
        self.assertEqual(len(cells[("branin", 100)]["hebo"]), 3)

    def test_notch_is_157_iqr_over_root_n(self):
        # hpo_gp on branin after 25 trials: 0.40, 0.41, 0.45; inclusive quartiles 0.405 and 0.43.
        cell = _results.quality_cells(self.records)[("branin", 25)]
        self.assertAlmostEqual(cell["hpo_gp"].notch, 1.57 * 0.025 / math.sqrt(3))
        self.assertEqual(_results.notch([1.0]), math.inf)

    def test_bayes_must_beat_the_best_optuna_tpe(self):
        got = outcomes(_results.quality_verdicts(self.records))
        # Best TPE (multivariate) 0.47 / 0.44 / 0.405 against hpo_bayes 0.52 / 0.41 / 0.399.
        self.assertEqual(got[("quality", "branin@25", "bayes_beats_tpe")], "missed")
        self.assertEqual(got[("quality", "branin@50", "bayes_beats_tpe")], "met")
        self.assertEqual(got[("quality", "branin@100", "bayes_beats_tpe")], "met")
        # No hpo_bayes or TPE line for hartmann6: unmeasured, never met.
        self.assertEqual(got[("quality", "hartmann6@50", "bayes_beats_tpe")], "unmeasured")

    def test_gp_within_noise_of_the_best_model_based_peer(self):
        got = outcomes(_results.quality_verdicts(self.records))
        # branin@25: 0.41 against HEBO's 0.3985, a gap of 0.0115 inside the notches' 0.0231.
        self.assertEqual(got[("quality", "branin@25", "gp_matches_best_model")], "met")
        # hartmann6: -3.05 against -3.32, a gap of 0.27 far outside the notches' 0.0498.
        self.assertEqual(got[("quality", "hartmann6@100", "gp_matches_best_model")], "missed")

    def test_overhead_pairs_like_with_like(self):
        got = outcomes(_results.overhead_verdicts(self.records))
        # In-process: 0.00325 against Optuna's 0.04828 / 10.
        self.assertEqual(got[("overhead", "sleep:hpo_builtin", "tenth_of_best_peer")], "met")
        # Programs: 0.0125 against Optuna running the program, 0.08 / 10.
        self.assertEqual(got[("overhead", "sleep:hpo_command", "tenth_of_best_peer")], "missed")
        self.assertNotIn(("overhead", "train:hpo_builtin", "tenth_of_best_peer"), got)

    def test_target_counts_an_unreached_seed_as_infinite(self):
        cells = _results.target_cells(self.records)
        self.assertEqual(cells["0.865"]["hpo_bayes_stopping"].values, [45.0, 60.0, math.inf])
        got = outcomes(_results.target_verdicts(self.records))
        self.assertEqual(got[("target", "0.865", "default_is_best")], "missed")  # 60 > DyHPO's 55
        self.assertEqual(got[("target", "0.87", "default_is_best")], "met")  # 100 <= DEHB's 120

    def test_markdown_lists_every_system_of_a_table(self):
        table = _results.markdown(self.records)
        self.assertIn("| sleep | hpo_builtin | 0.0032 | 3.61 |", table)
        self.assertIn("| 0.865 | ", table)
        self.assertIn("inf", _results._format(math.inf))

    def test_compare_from_log_prints_goals_and_fails_on_a_failed_line(self):
        run = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "peers", "compare.py"),
                              "--from-log", LOG], capture_output=True, text=True)
        self.assertEqual(run.returncode, 1, run.stderr)
        self.assertIn("bench=peer_goal comparison=target cell=0.87 goal=default_is_best "
                      "outcome=met", run.stdout)
        self.assertIn("failed: peer_quality smac_hpo: ValueError:_bad_bounds", run.stdout)


if __name__ == "__main__":
    unittest.main()
