"""Verdict on conformance scenarios run by name (`--scenario NAME -o DIR`): every scenario
must have left its checks.json in DIR and every check in it must be SUCCESS: a skipped,
warning or failed check fails the run, so a scenario whose checks were never exercised
(a server that does not declare the extension, a client that never listed) cannot pass.

Usage: python3 extension_checks.py RESULTS_DIR SCENARIO...
"""
import glob
import json
import os
import sys


def main(results, scenarios):
    bad = 0
    for scenario in scenarios:
        # The suite names a result directory <scenario>-<time> (client leg) or
        # server-<scenario>-<time> (server leg); a `/` in a name (auth/dpop) is a directory.
        found = sorted(
            glob.glob(os.path.join(results, f"{scenario}-2*", "checks.json"))
            + glob.glob(os.path.join(results, f"server-{scenario}-2*", "checks.json"))
        )
        if not found:
            print(f"{scenario}: no checks.json under {results}")
            bad += 1
            continue
        checks = json.load(open(found[-1]))
        # INFO entries log the traffic (the authorization scenarios); they check nothing.
        checks = [c for c in checks if c.get("status") != "INFO"]
        others = [c for c in checks if c.get("status") != "SUCCESS"]
        print(f"{scenario}: {len(checks) - len(others)}/{len(checks)} checks SUCCESS")
        for c in others:
            print(f"  {c.get('status')}: {c.get('id')}: {c.get('errorMessage', '')}")
        if others or not checks:
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
