#!/usr/bin/env python3
"""How much faster than real time the teaching scenarios run: `ksim run FILE --report R.json`
(every variant) for each scenario under scenarios/teaching/, several times per binary given with
--ksim (name=path), alternating the binaries, so that a before/after comparison is one run on
one machine. A run's cost is its CPU time (user + system, process start included, from wait4);
its simulated time is the sum over the variants of the report's end_us - start_us. Prints a
Markdown table of the smallest CPU time per binary and scenario; --out writes it as JSON.

  bench/teaching_speed.py --ksim before=/tmp/ksim-before --ksim after=build/tools/ksim --runs 5
"""
import argparse
import glob
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scale_sweep import run_measured  # noqa: E402


def simulated_s(report_path):
    with open(report_path) as f:
        report = json.load(f)
    return sum((v["end_us"] - v["start_us"]) / 1e6 for v in report["variants"].values())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ksim", action="append", required=True, help="name=path")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--scenarios", default="scenarios/teaching/*.json")
    parser.add_argument("--out")
    args = parser.parse_args()
    binaries = [entry.split("=", 1) if "=" in entry else (entry, entry) for entry in args.ksim]
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for scenario in sorted(glob.glob(args.scenarios)):
            best = {}
            simulated = None
            for _ in range(args.runs):
                for name, path in binaries:
                    report = os.path.join(work, "report.json")
                    code, _, cpu, _ = run_measured(
                        [path, "run", scenario, "--report", report],
                        os.path.join(work, "log.txt"))
                    if code not in (0, 1):
                        raise SystemExit(f"{name}: {scenario} exited {code}")
                    simulated = simulated_s(report)
                    best[name] = min(best.get(name, cpu), cpu)
            for name, _ in binaries:
                rows.append(dict(binary=name, scenario=os.path.basename(scenario),
                                 cpu_ms=round(best[name] * 1000, 1),
                                 simulated_s=round(simulated, 3),
                                 speedup=round(simulated / best[name]) if best[name] else 0))
    print("| scenario (all variants) | binary | CPU per run | simulated | simulated / CPU |")
    print("| --- | --- | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['scenario']} | {r['binary']} | {r['cpu_ms']:,} ms | {r['simulated_s']:,} s "
              f"| {r['speedup']:,}x |")
    if args.out:
        with open(args.out, "w") as out:
            json.dump(rows, out, indent=1)


if __name__ == "__main__":
    main()
