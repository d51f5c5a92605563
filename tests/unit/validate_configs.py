#!/usr/bin/env python3
"""Validates every sweep config under a folder against the Weights & Biases sweep schema.

Usage: validate_configs.py CONFIG_DIR SCHEMA_PATH

Every *.yaml under CONFIG_DIR, sub-folders included, is one of two kinds:
* an hpo config: a mapping with a `sweep:` key, whose value is validated;
* a bare W&B sweep file: a mapping without `sweep:` but with `method` at its top level (what
  `wandb sweep` takes and hpo runs with --run-cap etc.), validated whole.
Anything else is an error. Each is checked against SCHEMA_PATH (JSON Schema draft 7) as W&B reads
it: YAML is loaded with PyYAML, as the wandb CLI does, so for example `1e-4` (no dot) is a string
there and fails where the schema wants a number.

Exit status: 0 all valid; 1 a config is invalid or there is no *.yaml under CONFIG_DIR; 77
(ctest's skip code) when SCHEMA_PATH does not exist.
"""

import json
import pathlib
import sys

import jsonschema
import yaml

SKIP = 77


def sweep_errors(config_path, validator):
    """Returns the schema violations of the file's W&B sweep configuration, as readable lines: its
    `sweep:` section, or the whole file when it is a bare W&B sweep file."""
    try:
        document = yaml.safe_load(config_path.read_text())
    except (OSError, yaml.YAMLError) as error:
        return [f"cannot read: {error}"]
    if not isinstance(document, dict):
        return ["not a mapping"]
    if "sweep" in document:
        sweep, prefix = document["sweep"], ["sweep"]
    elif "method" in document:
        sweep, prefix = document, []  # a bare W&B sweep file
    else:
        return ["neither a `sweep:` section nor a bare W&B sweep file (no top-level `method`)"]
    checks = [(validator, sweep, prefix)]
    # Several objectives (docs/config.md, "Search and early stopping"): `metric` as a list of
    # metrics is hpo's own, which W&B's schema refuses. The rest of the sweep is checked without
    # it (W&B requires no metric), and each entry as a W&B metric.
    if isinstance(sweep, dict) and isinstance(sweep.get("metric"), list) and sweep["metric"]:
        metric_validator = type(validator)({**validator.schema, "$ref": "#/definitions/metric"})
        checks = [(validator, {k: v for k, v in sweep.items() if k != "metric"}, prefix)]
        checks += [(metric_validator, entry, [*prefix, "metric", str(i)])
                   for i, entry in enumerate(sweep["metric"])]
    errors = []
    for check, part, part_prefix in checks:
        for error in sorted(check.iter_errors(part), key=lambda e: [str(p) for p in e.path]):
            location = ".".join(str(p) for p in [*part_prefix, *error.path]) or "(top level)"
            errors.append(f"{location}: {error.message}")
    return errors


def main(argv):
    if len(argv) != 3:
        print("usage: validate_configs.py CONFIG_DIR SCHEMA_PATH", file=sys.stderr)
        return 1
    config_dir = pathlib.Path(argv[1])
    schema_path = pathlib.Path(argv[2])
    if not schema_path.is_file():
        print(f"skipped: schema {schema_path} not found")
        return SKIP
    schema = json.loads(schema_path.read_text())
    validator = jsonschema.Draft7Validator(schema)

    configs = sorted(config_dir.rglob("*.yaml"))
    if not configs:
        print(f"FAIL: no *.yaml config in {config_dir} or its sub-folders")
        return 1
    failures = 0
    for config_path in configs:
        errors = sweep_errors(config_path, validator)
        if errors:
            failures += 1
            print(f"FAIL {config_path}")
            for error in errors:
                print(f"  {error}")
        else:
            print(f"ok   {config_path}")
    print(f"{len(configs) - failures} of {len(configs)} configs valid")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
