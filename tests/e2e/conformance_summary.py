#!/usr/bin/env python3
"""Summarise a run of the MCP conformance suite (`conformance server -o DIR`) against the
expected-failures baseline, by the suite's own rule: a scenario fails when any of its checks is
FAILURE or WARNING.

    conformance_summary.py RESULTS_DIR tests/e2e/conformance-expected-failures.yml

Prints one line per scenario and `passed / expected-failed / failed` counts. Exits 1 when a
scenario outside the baseline failed, when a baseline entry passed (stale: remove it), or when a
baseline entry did not run at all. Standard library only.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path


def load_baseline(path: Path) -> dict[str, str]:
    """The `server:` entries of the baseline YAML, each with the comment after it as reason."""
    entries: dict[str, str] = {}
    section = None
    for line in path.read_text(encoding="utf-8").splitlines():
        top = re.match(r"^([A-Za-z_]+):\s*(#.*)?$", line)
        if top:
            section = top.group(1)
            continue
        item = re.match(r"^\s+-\s+([A-Za-z0-9_.-]+)\s*(?:#\s*(.*))?$", line)
        if item and section == "server":
            entries[item.group(1)] = (item.group(2) or "").strip()
    return entries


def scenario_of(directory: Path) -> str:
    # server-<scenario>-<ISO timestamp with dashes>
    m = re.match(r"^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$", directory.name)
    return m.group(1) if m else directory.name


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    results, baseline_path = Path(sys.argv[1]), Path(sys.argv[2])
    baseline = load_baseline(baseline_path)

    runs: dict[str, list[dict]] = {}
    for checks_file in sorted(results.glob("*/checks.json")):
        runs[scenario_of(checks_file.parent)] = json.loads(checks_file.read_text(encoding="utf-8"))
    if not runs:
        print(f"no results under {results}", file=sys.stderr)
        return 1

    passed, expected, unexpected, stale = [], [], [], []
    print(f"{'scenario':<34} {'result':<16} detail")
    for scenario, checks in sorted(runs.items()):
        bad = [c for c in checks if c.get("status") in ("FAILURE", "WARNING")]
        counted = [c for c in checks if c.get("status") in ("SUCCESS", "FAILURE", "WARNING")]
        if bad and scenario in baseline:
            expected.append(scenario)
            result, detail = "expected-fail", baseline[scenario]
        elif bad:
            unexpected.append(scenario)
            first = bad[0]
            result = "FAILED"
            detail = f"{first.get('id')}: {first.get('status')} {first.get('errorMessage') or ''}".strip()
        elif scenario in baseline:
            stale.append(scenario)
            result, detail = "STALE", "passes now: remove it from the expected failures"
        else:
            passed.append(scenario)
            result = "passed"
            detail = f"{len(counted)} checks" if counted else "informational checks only (nothing to fail)"
        print(f"{scenario:<34} {result:<16} {detail}")

    missing = sorted(set(baseline) - set(runs))
    for scenario in missing:
        print(f"{scenario:<34} {'NOT RUN':<16} listed as an expected failure but the suite did not run it")

    print(
        f"conformance: {len(passed)} passed, {len(expected)} expected-failed, "
        f"{len(unexpected)} failed, {len(stale)} stale, {len(missing)} listed but not run"
    )
    if unexpected:
        print(f"unexpected failures (fix, or list with a reason in {baseline_path}): {', '.join(unexpected)}")
    if stale:
        print(f"stale expected failures (they pass now; remove them from {baseline_path}): {', '.join(stale)}")
    if missing:
        print(f"expected failures that did not run (remove them from {baseline_path}): {', '.join(missing)}")
    return 1 if unexpected or stale or missing else 0


if __name__ == "__main__":
    sys.exit(main())
