#!/usr/bin/env python3
"""The conformance scoreboard: the official MCP conformance suite's requirement sets, scored
from the suite's saved results and checked against this project's expected failures.

    conformance_summary.py REQUIREMENTS_DIR BASELINE_DIR RESULTS_DIR [--skip LEG=REASON]...

REQUIREMENTS_DIR   the suite's `requirements/` (one `<revision>.yaml` per spec revision)
BASELINE_DIR       tests/e2e/conformance: `<leg>-<revision>.yml` expected failures
RESULTS_DIR        holds `<revision>-<leg>/`, the suite's `-o` output of each run
--skip LEG=REASON  a leg that was not run (e.g. no client yet), shown with its reason
--table FILE       also write the scoreboard table (and the not-scored list) to FILE

Rules, the suite's own:
- a required scenario *passes* the requirement set when none of its checks is FAILURE (a
  WARNING does not lower the score);
- for the baseline a check *fails* when it is FAILURE or WARNING. A baseline entry is
  `<scenario>` (the scenario fails) or `<scenario>:<check-id>` (that check fails).

Prints the expected and unexpected failures of each run, then the table: revision x leg ->
required passed / total, and the not-scored scenarios (extensions, pending, added after the
release) with their status. Exits 1 when a required scenario fails outside the baseline (a
regression), when a baseline entry passes (stale: remove it), or when a required scenario did
not run. Needs PyYAML.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

LEGS = ("server", "client")
BAD = ("FAILURE", "WARNING")


@dataclass
class Run:
    revision: str
    leg: str
    required: list[str]
    not_scored: list[dict]
    skipped: str | None = None
    checks: dict[str, list[dict]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def load_baseline(path: Path, leg: str) -> dict[str, str]:
    """`entry -> reason`: the entries of the leg's list, each with the comment after it."""
    if not path.exists():
        return {}
    entries = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    reasons: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        item = re.match(r"^\s+-\s+(\S+)\s*(?:#\s*(.*))?$", line)
        if item:
            reasons[item.group(1)] = (item.group(2) or "").strip()
    return {str(e): reasons.get(str(e), "") for e in entries.get(leg) or []}


def load_results(directory: Path, leg: str, scenarios: list[str]) -> dict[str, list[dict]]:
    """`scenario -> checks` from `<scenario>-<timestamp>/checks.json` under `directory`. The
    server leg prefixes the directory with `server-` and writes a `/` in a scenario name as
    `-`; the client leg writes no prefix and keeps the `/` as a subdirectory (`auth/...`)."""
    by_dirname = {s.replace("/", "-"): s for s in scenarios}
    found: dict[str, list[dict]] = {}
    for checks_file in sorted(directory.glob("**/checks.json")):
        relative = checks_file.parent.relative_to(directory).as_posix()
        m = re.match(rf"^(?:{leg}-)?(.+)-\d{{4}}-\d{{2}}-\d{{2}}T[\d-]+Z$", relative)
        name = m.group(1) if m else relative
        scenario = name if name in scenarios else by_dirname.get(name.replace("/", "-"), name)
        found[scenario] = json.loads(checks_file.read_text(encoding="utf-8"))
    return found


def passes(checks: list[dict]) -> bool:
    """The requirement set's rule: no check is FAILURE."""
    return not any(c.get("status") == "FAILURE" for c in checks)


def judge(run: Run, baseline: dict[str, str]) -> None:
    """Prints each failing check against the baseline; records regressions and stale entries."""
    for scenario in run.required:
        checks = run.checks.get(scenario)
        if checks is None:
            run.problems.append(f"{scenario}: required but did not run")
            continue
        bad = [c for c in checks if c.get("status") in BAD]
        if scenario in baseline:
            if bad:
                print(f"  expected-fail  {scenario}  # {baseline[scenario]}")
            else:
                run.problems.append(f"{scenario}: passes now, remove it from the baseline (stale)")
            continue
        listed = {e.split(":", 1)[1]: r for e, r in baseline.items() if e.startswith(scenario + ":")}
        bad_ids = {c.get("id") for c in bad}
        for check in bad:
            cid = check.get("id")
            if cid in listed:
                print(f"  expected-fail  {scenario}:{cid}  # {listed[cid]}")
            else:
                message = (check.get("errorMessage") or "").strip().replace("\n", " ")[:160]
                run.problems.append(f"{scenario}:{cid}: {check.get('status')} {message}")
        for cid in sorted(set(listed) - bad_ids):
            run.problems.append(f"{scenario}:{cid}: passes now, remove it from the baseline (stale)")
    required = set(run.required)
    for entry in baseline:
        if entry.split(":", 1)[0] not in required:
            run.problems.append(f"{entry}: in the baseline but not required by {run.revision}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("requirements", type=Path)
    parser.add_argument("baselines", type=Path)
    parser.add_argument("results", type=Path)
    parser.add_argument("--skip", action="append", default=[], metavar="LEG=REASON")
    parser.add_argument("--table", type=Path)
    opts = parser.parse_args(argv)
    skips = dict(s.partition("=")[::2] for s in opts.skip)
    requirements, baselines, results = opts.requirements, opts.baselines, opts.results

    runs: list[Run] = []
    for req_file in sorted(requirements.glob("*.yaml")):
        req = yaml.safe_load(req_file.read_text(encoding="utf-8"))
        revision = str(req.get("revision") or req_file.stem)
        for leg in LEGS:
            run = Run(
                revision=revision,
                leg=leg,
                required=[str(s) for s in req.get(leg) or []],
                not_scored=[e for e in req.get("not_scored") or [] if e.get("leg") == leg],
                skipped=skips.get(leg),
            )
            runs.append(run)
            if run.skipped is not None:
                continue
            print(f"\n{revision} {leg}:")
            run.checks = load_results(results / f"{revision}-{leg}", leg, run.required + [e["scenario"] for e in run.not_scored])
            judge(run, load_baseline(baselines / f"{leg}-{revision}.yml", leg))
            for problem in run.problems:
                print(f"  FAILED         {problem}")

    table: list[str] = []
    out = table.append
    out("Conformance scoreboard (required scenarios passed, the suite's rule: no FAILURE check)")
    out(f"  {'revision':<11} {'leg':<7} {'passed':>13}  note")
    for run in runs:
        total = len(run.required)
        if run.skipped is not None:
            out(f"  {run.revision:<11} {run.leg:<7} {f'0 of {total}':>13}  not run: {run.skipped}")
            continue
        passed = [s for s in run.required if s in run.checks and passes(run.checks[s])]
        warned = [s for s in passed if any(c.get("status") == "WARNING" for c in run.checks[s])]
        note = f"{len(warned)} of them with warnings" if warned else ""
        out(f"  {run.revision:<11} {run.leg:<7} {f'{len(passed)} of {total}':>13}  {note}")
    out("Not scored (run and reported, never counted):")
    for run in runs:
        for entry in run.not_scored:
            scenario = entry["scenario"]
            if run.skipped is not None:
                status = "not run"
            elif scenario not in run.checks:
                status = "did not run"
            else:
                status = "passed" if passes(run.checks[scenario]) else "failed"
            out(f"  {run.revision:<11} {run.leg:<7} {scenario:<40} {entry.get('reason', ''):<20} {status}")

    print("\n" + "\n".join(table))
    if opts.table:
        opts.table.write_text("\n".join(table) + "\n", encoding="utf-8")

    problems = [p for run in runs for p in run.problems]
    if problems:
        print(f"\nconformance: {len(problems)} problem(s) against the baselines in {baselines}:")
        for run in runs:
            for p in run.problems:
                print(f"  {run.revision} {run.leg}: {p}")
        return 1
    print("\nconformance: every required scenario passes or is an expected failure; no stale entry")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
