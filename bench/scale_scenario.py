#!/usr/bin/env python3
"""Writes the scale benchmark's scenario: one topic of N partitions on B brokers under a fault.

The scenario of docs/BENCHMARKS.md, "Scale": B brokers (3 by default), topic `t` with N
partitions, replication factor 3 and `min.insync.replicas=2`, the replicas of partition p on
brokers p, p+1, p+2 (mod B, counted from 1: every broker leads N/B partitions, as Kafka's even
spread); an idempotent acks=all producer `p1` (Kafka 1.0's by default: `--kafka-version`, 1.0 unless
given, since a 0.10 producer has no idempotence; from 1.1 the followers fetch in KIP-227
sessions) writing R keyless records (round-robin over the
partitions) at `--rate` records a second from 0 s; a consumer group `g1` reading them from the
earliest offset; the leader of partition 0 (broker 1) crashed at 5 s and restarted at 10 s;
25 s of simulated time, then the runner's final phase (heal, restart, drain).

  bench/scale_scenario.py --partitions 1000 --brokers 5 > /tmp/scale-1000.json
  build/tools/ksim run /tmp/scale-1000.json

bench/scale_sweep.py imports scenario() to generate every case of its sweep.
"""
import argparse
import json
import sys


def scenario(partitions, brokers=3, records=10_000, rate_per_s=1_000, duration_ms=25_000,
             seed=1, kafka_version="1.0"):
    """The scenario as a dict (docs/scenarios.md)."""
    if brokers < 3:
        raise ValueError("replication factor 3 needs at least 3 brokers")
    assignment = {
        str(p): [(p + i) % brokers + 1 for i in range(3)] for p in range(partitions)
    }
    return {
        "ksim": 1,
        "name": f"scale-{partitions}p-{brokers}b-{records}r",
        "description": (f"Scale benchmark (bench/scale_scenario.py): {partitions} partitions x "
                        f"RF 3 on {brokers} brokers, {records} records at {rate_per_s}/s, the "
                        "leader of t-0 crashed at 5 s and restarted at 10 s."),
        "seed": seed,
        "duration_ms": duration_ms,
        "kafka_version": kafka_version,
        "cluster": {"brokers": brokers},
        "topics": {
            "t": {
                "partitions": partitions,
                "replication_factor": 3,
                "config": {"min.insync.replicas": 2},
                "assignment": assignment,
            }
        },
        "clients": {
            "p1": {
                "type": "producer",
                "topic": "t",
                "messages": records,
                "rate_per_s": rate_per_s,
                "start_ms": 0,
                "config": {"acks": "all", "retries": 10, "enable.idempotence": True},
            },
            "c1": {
                "type": "consumer",
                "topics": ["t"],
                "group": "g1",
                "start_ms": 0,
                "commit": "after-processing",
                "config": {"auto.offset.reset": "earliest"},
            },
        },
        "actions": [
            {"at_ms": 5000, "do": "crash", "leader_of": "t-0"},
            {"at_ms": 10000, "do": "restart", "broker": 1},
        ],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--partitions", type=int, default=1)
    parser.add_argument("--brokers", type=int, default=3)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--rate", type=int, default=1_000, help="records per second")
    parser.add_argument("--duration-ms", type=int, default=25_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kafka-version", default="1.0",
                        help="the scenario's kafka_version (1.0 unless given)")
    parser.add_argument("-o", "--output", help="file to write (default: standard output)")
    args = parser.parse_args()
    text = json.dumps(scenario(args.partitions, args.brokers, args.records, args.rate,
                               args.duration_ms, args.seed, args.kafka_version), indent=1) + "\n"
    if args.output:
        with open(args.output, "w") as out:
            out.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
