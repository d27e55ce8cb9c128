#!/usr/bin/env python3
"""Pool one pgbench measurement's paired ratios over several bench/run results directories.

    python3 bench/lib/paired.py SUITE CLIENTS KIND DIR [DIR ...]

For each directory and for all of them together: the number of rounds, the median of the
paired ratios (each run's TPS over the built-in index's run of the same round), their
geometric mean, how many rounds reached each of 1.00x and 1.10x, and a 95% interval for the
median by resampling the rounds (percentile bootstrap, 10,000 resamples, fixed seed, so the
output is the same on every rerun). Standard library only.
"""

import random
import statistics
import sys

from report import base_kind, group_pgbench, paired_ratios, read_csv

RESAMPLES = 10000


def describe(label, ratios):
    rng = random.Random(1)
    medians = sorted(statistics.median(rng.choices(ratios, k=len(ratios)))
                     for _ in range(RESAMPLES))
    low, high = medians[int(RESAMPLES * 0.025)], medians[int(RESAMPLES * 0.975) - 1]
    print(f"{label}: {len(ratios)} rounds, median {statistics.median(ratios):.3f}x "
          f"(95% interval {low:.3f}-{high:.3f}), geometric mean "
          f"{statistics.geometric_mean(ratios):.3f}x, >= 1.00x in "
          f"{sum(x >= 1.0 for x in ratios)}, >= 1.10x in {sum(x >= 1.1 for x in ratios)}")


def main():
    if len(sys.argv) < 5 or not sys.argv[2].isdigit():
        sys.exit("usage: paired.py SUITE CLIENTS KIND DIR [DIR ...]")
    suite, clients, kind, dirs = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
    pooled = []
    for d in dirs:
        groups = group_pgbench(read_csv(d, "pgbench.csv"))
        ratios = paired_ratios(groups.get((suite, clients, kind), []),
                               groups.get((suite, clients, base_kind(suite)), []))
        if not ratios:
            sys.exit(f"{d}: no paired {suite} runs of {kind} at {clients} clients")
        describe(d, ratios)
        pooled += ratios
    if len(dirs) > 1:
        describe("pooled", pooled)


if __name__ == "__main__":
    main()
