#!/usr/bin/env python3
"""Plots the scale sweep (bench/scale_sweep.py --out JSON) to a PNG and prints its table.

Three panels, one per sweep: CPU time (user + system: on a shared machine the steadier figure;
wall time is in the JSON too) and peak memory per partition against partitions (the
`partitions` set: 10,000 records over them; the `idle` set: no records), and per record against
records (the `records` set, trace off). Each point is the marginal cost of a unit: for
partitions, the run's cost above the sweep's 1-partition run (the same records, or none) divided
by the partitions added; for records, the cost above the `floor` run
(no records: start, cluster, idle time, measured in the same sweep) divided by the records. A
flat line means linear cost. The table prints both the raw and the per-unit figures, and the
spread (largest / smallest per-unit figure) of each sweep, the issue's "flat within 2x", over
the points whose cost above their base is more than the measurement's resolution (20 ms of CPU,
1 MiB of peak memory); the plot leaves the others out too.

  scripts/plot_scale.py docs/img/scale-sweep.json docs/img/scale-sweep.png

Needs python3-matplotlib (scripts/bootstrap.sh installs it).
"""
import json
import sys


def per_unit(results, set_name, unit, base, binary):
    """Each run's cost above `base` (a run of the same sweep, or the floor) per unit added."""
    rows = [r for r in results
            if r["set"] == set_name and r["binary"] == binary and not r.get("trace")]
    out = []
    for r in sorted(rows, key=lambda r: r[unit]):
        added = r[unit] - (base[unit] if base and base["set"] == set_name else 0)
        if added <= 0:
            continue
        cpu = r["cpu_s"] - (base["cpu_s"] if base else 0)
        rss = r["peak_rss_mib"] - (base["peak_rss_mib"] if base else 0)
        out.append(dict(n=r[unit], cpu_s=r["cpu_s"], rss_mib=r["peak_rss_mib"],
                        cpu_added_s=cpu, rss_added_mib=rss,
                        cpu_us_per=max(cpu, 0) * 1e6 / added,
                        rss_kib_per=max(rss, 0) * 1024 / added, simulated_s=r["simulated_s"]))
    return out


# Below these a run's cost above its base is the measurement's resolution, not the cost: CPU time
# comes in 10 ms ticks, and peak RSS moves by an allocator's arena between two runs of the same
# work. Such points are shown in the table but left out of the spread.
CPU_RESOLUTION_S = 0.02
RSS_RESOLUTION_MIB = 1.0


def measured(rows, per, added, resolution):
    """The rows whose cost above their base is beyond the resolution (the spread's and the plot's)."""
    return [r for r in rows if r[added] >= resolution and r[per] > 0]


def spread(rows, per, added, resolution):
    values = [r[per] for r in measured(rows, per, added, resolution)]
    return max(values) / min(values) if values else float("nan")


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: scripts/plot_scale.py SWEEP.json OUT.png")
    with open(sys.argv[1]) as f:
        sweep = json.load(f)
    results = sweep["results"]
    binary = results[-1]["binary"]
    floors = [r for r in results if r["set"] == "floor" and r["binary"] == binary]
    floor = floors[0] if floors else None
    panels = [("partitions", "partitions", "partition"), ("idle", "partitions", "idle partition"),
              ("records", "records", "record")]
    lines = []
    if floor:
        lines.append(f"fixed cost (floor: 0 records, 1 partition): {floor['cpu_s']:.2f} s CPU, "
                     f"{floor['peak_rss_mib']:.0f} MiB")
    series = {}
    for set_name, unit, label in panels:
        # Partitions: the marginal cost of a partition, above the sweep's 1-partition run (the
        # same records); records: the cost above the floor (no records at all).
        smallest = min((r for r in results if r["set"] == set_name and r["binary"] == binary),
                       key=lambda r: r[unit], default=None)
        rows = per_unit(results, set_name, unit,
                        floor if set_name == "records" else smallest, binary)
        series[set_name] = rows
        if not rows:
            continue
        lines.append("")
        lines.append(f"| {unit} | CPU s | peak MiB | simulated s | CPU us / {label} | "
                     f"KiB / {label} |")
        lines.append("| ---: | ---: | ---: | ---: | ---: | ---: |")
        for r in rows:
            lines.append(f"| {r['n']:,} | {r['cpu_s']:.2f} | {r['rss_mib']:.0f} | "
                         f"{r['simulated_s']:.1f} | {r['cpu_us_per']:,.1f} | "
                         f"{r['rss_kib_per']:,.1f} |")
        time_spread = spread(rows, "cpu_us_per", "cpu_added_s", CPU_RESOLUTION_S)
        memory_spread = spread(rows, "rss_kib_per", "rss_added_mib", RSS_RESOLUTION_MIB)
        lines.append(f"\nspread per {label}: time {time_spread:.2f}x, memory {memory_spread:.2f}x "
                     f"(points within {CPU_RESOLUTION_S * 1000:.0f} ms CPU or "
                     f"{RSS_RESOLUTION_MIB:.0f} MiB of their base left out)")
    print("\n".join(lines))

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    shown = [panel for panel in panels if series[panel[0]]]
    fig, axes = plt.subplots(1, len(shown), figsize=(5.5 * len(shown), 4.2), squeeze=False)
    axes = axes[0]
    for ax, (set_name, unit, label) in zip(axes, shown):
        rows = series[set_name]
        # As in the spread: a point whose cost above its base is within the resolution is left
        # out (its figure is a rounding error; a zero cannot be drawn on a log axis anyway).
        cpu = measured(rows, "cpu_us_per", "cpu_added_s", CPU_RESOLUTION_S)
        rss = measured(rows, "rss_kib_per", "rss_added_mib", RSS_RESOLUTION_MIB)
        ax.plot([r["n"] for r in cpu], [r["cpu_us_per"] for r in cpu], "o-",
                label=f"CPU us / {label}")
        ax.plot([r["n"] for r in rss], [r["rss_kib_per"] for r in rss], "s--",
                label=f"peak KiB / {label}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(unit)
        ax.set_title(f"cost per {label} added")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle(f"ksim scale sweep ({binary}, {sweep.get('machine', '')})")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=90)


if __name__ == "__main__":
    main()
