#!/usr/bin/env python3
"""The scale benchmark: `ksim run` over the scenario of bench/scale_scenario.py, swept over
partitions and records, with the bare log append as the baseline of the same run.

Each case is one `ksim run SCENARIO --report R.json` in a fresh process; its wall time, CPU time
(user + system) and peak resident memory (the kernel's ru_maxrss from wait4) are measured, and
the simulated time comes from the report (the run's end). Every case runs once per binary given
with --ksim (name=path, e.g. before=/tmp/ksim-before after=build/tools/ksim), so a before/after
comparison is one run on one machine. The baseline, in the same run: cluster_bench's
BM_LogAppendBaseline (one Log on a VirtualDisk appending the records one batch each: the
storage engine alone), as microseconds per record.

Sets of cases (--set, repeatable):
  table       the issue's table: 1 and 100 partitions on 3 brokers, 1,000 on 5, 10,000 on 10;
              10,000 records at 1,000/s
  partitions  1, 10, 100, 1,000, 10,000 partitions on 5 brokers, 10,000 records at 1,000/s
  idle        the same partitions with no records: what a partition costs by being there
              (its replicas' creation, the fetch rounds, the consumer group), apart from the
              records, whose batches shrink as they spread over more partitions
  records     10,000, 100,000, 1,000,000 records over 10 s (rate = records / 10 s), 10
              partitions on 3 brokers; plus the same runs writing their trace to a file
  floor       0 records, 1 partition, 3 brokers: the fixed cost (start, cluster, idle time)

  bench/scale_sweep.py --ksim after=build/tools/ksim --set table --out /tmp/table.json
  bench/scale_sweep.py --ksim build/tools/ksim --set table --kafka-version 2.0
  bench/scale_sweep.py --ksim build/tools/ksim --set floor --set partitions --set idle \\
      --set records --out docs/img/scale-sweep.json
  scripts/plot_scale.py docs/img/scale-sweep.json docs/img/scale-sweep.png

--skip NAME:PARTITIONS skips a binary on cases of at least that many partitions (a "before"
binary that would need tens of GB). --repeat N runs each case N times per binary, the binaries
taking turns, and keeps the median wall time, CPU time and peak memory (each run's in
`*_runs`): a shared machine's noise moves one run of a small case by half its cost. --warmup N
runs each case N times per binary before those, left out of the medians (their figures in
`warmup_*_runs`): on a virtual machine whose host backs the guest's memory only when it is
first touched, and takes it back when freed, the first runs of a case larger than the one
before it pay the host's page faults (the 1,000-partition run after the 100-partition one took
0.50 and 0.30 s of CPU, then 0.25, 0.25, 0.25 s: docs/BENCHMARKS.md, twenty-first change).
--pause S idles S seconds before each run instead: a run as a user starts one, once the guest has
handed its free memory back (a run right after another finds it still backed). --env
NAME:VAR=VALUE sets a variable for one binary's runs (huge:KSIM_HUGE_PAGES=1), so that one binary
can be measured twice under two names.
Prints a Markdown table; --out writes every figure as JSON.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale_scenario  # noqa: E402


def cases(names):
    out = []
    for name in names:
        if name == "table":
            for partitions, brokers in ((1, 3), (100, 3), (1000, 5), (10000, 10)):
                out.append(dict(set=name, partitions=partitions, brokers=brokers,
                                records=10_000, rate=1_000, trace=False))
        elif name == "partitions":
            for partitions in (1, 10, 100, 1000, 10000):
                out.append(dict(set=name, partitions=partitions, brokers=5, records=10_000,
                                rate=1_000, trace=False))
        elif name == "idle":
            for partitions in (1, 10, 100, 1000, 10000):
                out.append(dict(set=name, partitions=partitions, brokers=5, records=0,
                                rate=1_000, trace=False))
        elif name == "records":
            for trace in (False, True):
                for records in (10_000, 100_000, 1_000_000):
                    out.append(dict(set=name, partitions=10, brokers=3, records=records,
                                    rate=records // 10, trace=trace))
        elif name == "floor":
            out.append(dict(set=name, partitions=1, brokers=3, records=0, rate=1_000,
                            trace=False))
        else:
            raise SystemExit(f"scale_sweep: unknown set '{name}'")
    return out


def run_measured(argv, log_path, env=None):
    """Runs argv (with `env` added to the environment); returns (exit code, wall s, cpu s, peak
    RSS in KiB)."""
    with open(log_path, "wb") as log:
        start = time.monotonic()
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                   env=dict(os.environ, **(env or {})))
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.monotonic() - start
    process.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4
    return process.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def run_case(ksim, case, work, kafka_version, env=None):
    spec = scale_scenario.scenario(case["partitions"], case["brokers"], case["records"],
                                   case["rate"], kafka_version=kafka_version)
    path = os.path.join(work, "scenario.json")
    with open(path, "w") as out:
        json.dump(spec, out)
    report = os.path.join(work, "report.json")
    argv = [ksim, "run", path, "--report", report]
    trace = os.path.join(work, "trace.jsonl")
    if case["trace"]:
        argv += ["--trace", trace]
    code, wall, cpu, rss_kib = run_measured(argv, os.path.join(work, "log.txt"), env)
    if code >= 2:
        with open(os.path.join(work, "log.txt")) as log:
            raise SystemExit(f"scale_sweep: {' '.join(argv)} exited {code}:\n{log.read()}")
    with open(report) as f:
        variant = json.load(f)["variants"]["base"]
    simulated_s = variant.get("end_us", 0) / 1e6
    result = dict(case, exit=code, wall_s=round(wall, 3), cpu_s=round(cpu, 3),
                  peak_rss_mib=round(rss_kib / 1024, 1), simulated_s=round(simulated_s, 3),
                  trace_lines=variant.get("trace_lines"))
    if case["trace"]:
        result["trace_mib"] = round(os.path.getsize(trace) / 2**20, 1)
        os.remove(trace)
    return result


def median_of(runs):
    """One result for the runs of a case: the first's figures, with the median wall time, CPU
    time and peak memory, and every run's in wall_s_runs, cpu_s_runs, peak_rss_mib_runs."""
    result = dict(runs[0])
    if len(runs) == 1:
        return result
    for key in ("wall_s", "cpu_s", "peak_rss_mib"):
        values = sorted(run[key] for run in runs)
        result[key] = values[len(values) // 2]
        result[key + "_runs"] = [run[key] for run in runs]
    return result


def log_append_baseline(cluster_bench):
    """Microseconds per record of one Log appending on a VirtualDisk (BM_LogAppendBaseline)."""
    out = subprocess.check_output([cluster_bench, "--benchmark_filter=BM_LogAppendBaseline",
                                   "--benchmark_format=json", "--benchmark_min_time=0.5"],
                                  stderr=subprocess.DEVNULL)
    bench = json.loads(out)["benchmarks"][0]
    return 1e6 / bench["records_per_s"]


def table(results):
    lines = ["| binary | set | partitions | brokers | records | trace | wall s | cpu s | "
             "peak MiB | simulated s | simulated / wall | simulated / cpu |",
             "| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results:
        ratio = r["simulated_s"] / r["wall_s"] if r["wall_s"] > 0 else 0
        cpu_ratio = r["simulated_s"] / r["cpu_s"] if r["cpu_s"] > 0 else 0
        lines.append(f"| {r['binary']} | {r['set']} | {r['partitions']:,} | {r['brokers']} | "
                     f"{r['records']:,} | {'file' if r['trace'] else '-'} | {r['wall_s']:.2f} | "
                     f"{r['cpu_s']:.2f} | {r['peak_rss_mib']:,.0f} | {r['simulated_s']:.1f} | "
                     f"{ratio:,.1f}x | {cpu_ratio:,.1f}x |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ksim", action="append", required=True,
                        help="NAME=PATH or PATH of a ksim binary (repeatable)")
    parser.add_argument("--set", action="append", dest="sets", help="table, partitions, "
                        "idle, records, floor (repeatable; default: floor, partitions, idle, "
                        "records)")
    parser.add_argument("--cluster-bench", default=None,
                        help="cluster_bench binary for the baseline (default: beside ksim's "
                        "build, <build>/bench/cluster_bench)")
    parser.add_argument("--skip", action="append", default=[],
                        help="NAME:PARTITIONS: do not run NAME on cases with >= PARTITIONS")
    parser.add_argument("--max-partitions", type=int, default=None,
                        help="leave out cases of more partitions (a shorter sweep)")
    parser.add_argument("--max-records", type=int, default=None,
                        help="leave out cases of more records (a shorter sweep)")
    parser.add_argument("--kafka-version", default="1.0",
                        help="the scenarios' kafka_version (default 1.0; from 1.1 the followers "
                        "fetch in KIP-227 sessions)")
    parser.add_argument("--out", help="write the results as JSON here")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each case per binary, the medians kept (default 1)")
    parser.add_argument("--warmup", type=int, default=0,
                        help="runs of each case per binary before those, not counted "
                        "(default 0)")
    parser.add_argument("--pause", type=float, default=0.0,
                        help="seconds of idle before each run: every run then starts as a run "
                        "a user starts does (default 0: back to back)")
    parser.add_argument("--env", action="append", default=[], metavar="NAME:VAR=VALUE",
                        help="an environment variable for binary NAME's runs "
                        "(e.g. huge:KSIM_HUGE_PAGES=1; the same path may be given twice)")
    args = parser.parse_args()
    if args.repeat < 1:
        raise SystemExit(f"scale_sweep: --repeat {args.repeat}: expected 1 or more")
    if args.warmup < 0:
        raise SystemExit(f"scale_sweep: --warmup {args.warmup}: expected 0 or more")
    if args.pause < 0:
        raise SystemExit(f"scale_sweep: --pause {args.pause}: expected 0 or more seconds")
    envs = {}
    for item in args.env:
        name, colon, assignment = item.partition(":")
        var, equals, value = assignment.partition("=")
        if not colon or not equals or not var:
            raise SystemExit(f"scale_sweep: --env {item}: expected NAME:VAR=VALUE")
        envs.setdefault(name, {})[var] = value

    binaries = []
    for item in args.ksim:
        name, _, path = item.rpartition("=")
        binaries.append((name or "ksim", os.path.abspath(path)))
    for name in envs:
        if name not in {known for known, _ in binaries}:
            raise SystemExit(f"scale_sweep: --env {name}:...: no --ksim named {name}")
    skip = {}
    for item in args.skip:
        name, _, partitions = item.partition(":")
        skip[name] = int(partitions)
    cluster_bench = args.cluster_bench or os.path.join(
        os.path.dirname(os.path.dirname(binaries[-1][1])), "bench", "cluster_bench")

    baseline_us = log_append_baseline(cluster_bench) if os.path.exists(cluster_bench) else None
    results = []
    with tempfile.TemporaryDirectory(prefix="ksim-scale-") as work:
        for case in cases(args.sets or ["floor", "partitions", "idle", "records"]):
            if args.max_partitions is not None and case["partitions"] > args.max_partitions:
                continue
            if args.max_records is not None and case["records"] > args.max_records:
                continue
            runs = {name: [] for name, _ in binaries}
            warmups = {name: [] for name, _ in binaries}
            for turn in range(args.warmup + args.repeat):
                for name, path in binaries:
                    if name in skip and case["partitions"] >= skip[name]:
                        continue
                    if args.pause > 0:
                        time.sleep(args.pause)
                    run = run_case(path, case, work, args.kafka_version, envs.get(name))
                    (warmups if turn < args.warmup else runs)[name].append(run)
            for name, _ in binaries:
                if not runs[name]:
                    continue
                result = median_of(runs[name])
                for key in ("wall_s", "cpu_s", "peak_rss_mib"):
                    if warmups[name]:
                        result["warmup_" + key + "_runs"] = [run[key] for run in warmups[name]]
                result["binary"] = name
                result["kafka_version"] = args.kafka_version
                if name in envs:
                    result["env"] = envs[name]
                if args.pause > 0:
                    result["pause_s"] = args.pause
                results.append(result)
                print(table([result]).splitlines()[-1], file=sys.stderr, flush=True)
    print(table(results))
    if baseline_us is not None:
        print(f"\nbaseline: one Log append on a VirtualDisk, {baseline_us:.2f} us per record")
    if args.out:
        with open(args.out, "w") as out:
            json.dump({"machine": os.uname().nodename, "load_avg": os.getloadavg()[0],
                       "kafka_version": args.kafka_version,
                       "baseline_log_append_us_per_record": baseline_us,
                       "results": results}, out, indent=1)
            out.write("\n")


if __name__ == "__main__":
    main()
