"""Side by side: the ratios of pm_index's indexes to the built-in ones on each PostgreSQL major.

usage: majors.py DIR MAJOR...

Reads DIR/pg<MAJOR>/ (what bench/run --pg MAJOR wrote there: pgbench.csv, build.csv,
pt_build.csv, machine.txt) and writes DIR/summary.md: for every suite, client count and index
the paired ratio to the built-in index (report.py's, median of the rounds) on each major, and
the CREATE INDEX ratios.  The majors ran one after the other on the same machine, so a ratio
compares like with like; the TPS themselves are in each major's own summary.md.
"""
import os
import statistics
import sys

import report


def pgbench_rows(directories, majors, out):
    groups = {m: report.group_pgbench(report.read_csv(d, "pgbench.csv")) for m, d in directories.items()}
    keys = sorted({k for g in groups.values() for k in g},
                  key=lambda k: (report.order_key(list(report.SUITE_TEXT), k[0]), k[1], report.kind_key(k[2])))
    out.append("## pgbench: paired ratio to the built-in index\n")
    out.append("Each run's TPS over the built-in index's run of the same round (btree; GiST for the "
               "`pt_` and `sp_` suites), median of the rounds (min–max), per major.\n")
    out.append("| suite | clients | index | " + " | ".join(f"PostgreSQL {m}" for m in majors) + " |")
    out.append("|---|---:|---|" + "---:|" * len(majors))
    for suite, clients, kind in keys:
        base = report.base_kind(suite)
        if kind == base:
            continue
        cells = []
        for m in majors:
            g = groups[m]
            runs = g.get((suite, clients, kind))
            cells.append(report.paired_ratio(runs, g.get((suite, clients, base), [])) if runs else "–")
        out.append(f"| {suite} | {clients} | {kind} | " + " | ".join(cells) + " |")
    out.append("")
    suites = list(dict.fromkeys(k[0] for k in keys))
    out.append("Suites: " + "; ".join(f"`{s}`: {report.SUITE_TEXT.get(s, s)}" for s in suites) + ".\n")


def build_rows(directories, majors, out):
    out.append("## CREATE INDEX: time as a ratio to the built-in index's (median of the runs)\n")
    out.append("| data | index | " + " | ".join(f"PostgreSQL {m}" for m in majors) + " |")
    out.append("|---|---|" + "---:|" * len(majors))
    seconds = {}
    for m, d in directories.items():
        for r in report.read_csv(d, "build.csv"):
            seconds.setdefault((m, "kv", r["kind"]), []).append(float(r["seconds"]))
        for r in report.read_csv(d, "pt_build.csv"):
            seconds.setdefault((m, r["data"], r["kind"]), []).append(float(r["seconds"]))
    rows = sorted({(k[1], k[2]) for k in seconds}, key=lambda k: (k[0], report.kind_key(k[1])))
    for data, kind in rows:
        base = "btree" if data == "kv" else "gist"
        if kind == base:
            continue
        cells = []
        for m in majors:
            own, ref = seconds.get((m, data, kind)), seconds.get((m, data, base))
            cells.append(report.ratio(statistics.median(own), statistics.median(ref)) if own and ref else "–")
        out.append(f"| {data} | {kind} | " + " | ".join(cells) + " |")
    out.append("")


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: majors.py DIR MAJOR...")
    top, majors = sys.argv[1], sys.argv[2:]
    directories = {m: os.path.join(top, f"pg{m}") for m in majors}
    out = ["# pm_index on PostgreSQL " + ", ".join(majors) + ": ratios side by side\n"]
    for m, d in directories.items():
        with open(os.path.join(d, "machine.txt")) as f:
            out.append(f"PostgreSQL {m} ([its summary](pg{m}/summary.md)):\n\n```\n" + f.read().strip() + "\n```\n")
    pgbench_rows(directories, majors, out)
    build_rows(directories, majors, out)
    with open(os.path.join(top, "summary.md"), "w") as f:
        f.write("\n".join(out))


if __name__ == "__main__":
    main()
