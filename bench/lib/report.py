#!/usr/bin/env python3
"""Turn one bench/run results directory into summary.md and PNG plots.

    python3 bench/lib/report.py DIR

Reads whichever of pgbench.csv, build.csv, size.csv, recovery.csv, ready.csv, first_query.csv,
range_cpu.csv, core.csv, ycsb.csv and fbrtree.csv are in DIR (bench/run writes them), reports the median of the runs with their
min-max and the ratio to PostgreSQL's btree (or, for the core structures, to the baseline; for
the FBR-tree's fan-out study, to the shipped fan-out), and draws the plots with gnuplot.
Standard library only.
"""

import csv
import os
import statistics
import subprocess
import sys
from collections import OrderedDict, defaultdict

# none: the same table without an index (the insert suites), what an index costs is measured against
KIND_ORDER = ["btree", "nbtree_pm", "nbtree_pm_tiered", "phast_pm", "phast_pm_tiered", "nvbtree_pm", "hash", "hash_pm", "gist", "spgist",
              "fbrtree_pm", "fbrtree_pm_tiered", "none", "limit", "limit_io", "local", "fdw1", "fdw2"]
# bench_ycsb's structures: pm_index's ordered structures, then the DRAM baseline they are compared to
STRUCTURE_ORDER = ["nbtree", "phast", "baseline"]
SUITE_TEXT = OrderedDict([
    ("point", "point lookup (SELECT v WHERE k = random)"),
    ("point_plan", "the same, simple protocol: every query planned"),
    ("point_w", "point lookups while another session inserts 100 random keys 20 times a second into the same table"),
    ("range100", "range of 100 keys"),
    ("range100_io", "range of 100 keys from the index alone (count(*), an index-only scan)"),
    ("zipf_rw", "50:50 read/update, zipfian keys"),
    ("insert_sync", "1-row inserts, random keys, synchronous_commit on"),
    ("insert_async", "1-row inserts, random keys, synchronous_commit off"),
    ("batch100", "100-row inserts, random keys, synchronous_commit off"),
    ("unique100", "100-row inserts, random keys, into a unique index (`_u`) and into a plain one on an identical table, synchronous_commit off"),
    ("secondary4", "1-row inserts into a table with 4 indexes, synchronous_commit off"),
    ("uuid1", "1-row inserts of random uuids (gen_random_uuid()) into a unique index, synchronous_commit off"),
    ("uuid100", "100-row inserts of random uuids into a unique index, synchronous_commit off"),
    ("text_point", "point lookup of a 32-character text key (md5 of a random row number, collation \"C\")"),
    ("hk_u_point", "point lookup of a uuid key (md5 of a random row number as uuid)"),
    ("hk_t_point", "point lookup of a 32-character text key (md5 of a random row number, default collation)"),
    ("hk_u_batch100", "100-row inserts of random uuids (gen_random_uuid()), synchronous_commit off"),
    ("hk_t_batch100", "100-row inserts of random 32-character text keys, synchronous_commit off"),
    ("mc_point", "point lookup of a two-column key (int4 of 1,000 values, 32-character text in \"C\")"),
    ("mc_prefix10", "the first 10 rows from a text within one int4 value, in the index's order"),
    ("mc_batch100", "100-row inserts of random two-column keys, synchronous_commit off"),
    ("tpcb", "pgbench TPC-B-like, accounts index replaced, synchronous_commit off"),
    ("pt_win_001", "ids in a window holding 0.01% of uniform `point`s (p <@ box), no PostGIS"),
    ("pt_knn10", "10 nearest uniform `point`s (ORDER BY p <-> point LIMIT 10)"),
    ("sp_win_001", "ids in a window holding 0.01% of the uniform points (geom && envelope)"),
    ("sp_win_01", "the same, 0.1%"),
    ("sp_win_1", "the same, 1%"),
    ("sp_count_001", "count(*) in a 0.01% window (fbrtree_pm: index-only on geometry(Point))"),
    ("sp_knn10", "10 nearest uniform points (ORDER BY geom <-> point LIMIT 10)"),
    ("sp_clu_knn10", "10 nearest clustered points"),
    ("sp_clu_win", "ids in a 10 x 10 window of the clustered points"),
    ("sp_poly_intersects", "ST_Intersects(polygon, 10 x 10 envelope), ids"),
    ("sp_join", "10 roads joined to the polygons on ST_Intersects (a parameterized index scan per road)"),
    ("sp_batch100", "100-row inserts of random points, synchronous_commit off"),
    ("geo_dwithin_5km", "geography points around the world's cities: ids within 5 km of a random city (ST_DWithin)"),
    ("geo_dwithin_50km", "the same, within 50 km"),
    ("geo_knn10", "the 10 geography points nearest a random city (ORDER BY g <-> city LIMIT 10)"),
    ("nd_win_46", "ids of the 3-D points in a cube holding 0.01% of them (geom &&& 3-D box)"),
    ("nd_win_100", "the same, 0.1%"),
    ("nd_knn10", "the 10 nearest 3-D points (ORDER BY geom <<->> point LIMIT 10)"),
    ("sh_point", "point lookup on a local table (`local`) and through a postgres_fdw coordinator to one shard "
                 "(`fdw1`) and to a table hash-partitioned over two (`fdw2`), nbtree_pm on every shard"),
    ("sh_range100", "the same, sum over a range of 100 keys"),
    ("sh_win", "the same, ids in a 1 x 1 degree window of SRID 4326 points (fbrtree_pm)"),
    ("sh_knn10", "the same, the 10 nearest points (ORDER BY g <-> point LIMIT 10, pushed to each shard)"),
    ("sh_insert1", "the same, 1-row inserts routed to their shard, synchronous_commit on"),
])


def base_kind(suite):
    """the built-in index a suite's ratios are to"""
    if suite.startswith(("sp_", "geo_", "nd_", "pt_")):
        return "gist"
    if suite.startswith("sh_"):
        return "local"
    return "hash" if suite.startswith("hk_") else "btree"


def read_csv(directory, name):
    path = os.path.join(directory, name)
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def group_by(rows, key):
    """rows grouped by key(row), in a dict of lists"""
    groups = defaultdict(list)
    for r in rows:
        groups[key(r)].append(r)
    return groups


def group_pgbench(rows):
    """pgbench.csv rows by (suite, clients, kind)"""
    return group_by(rows, lambda r: (r["suite"], int(r["clients"]), r["kind"]))


def order_key(order, name):
    """sorts names by their place in order, names not in it last by name"""
    return (order.index(name) if name in order else len(order), name)


def kind_key(kind):
    return order_key(KIND_ORDER, kind)


def spread(values):
    """median, min, max of a list of floats"""
    return statistics.median(values), min(values), max(values)


def fmt(x, digits=0):
    if x >= 100 or digits == 0:
        return f"{x:,.0f}"
    return f"{x:.{digits}f}"


def fmt_spread(values, digits=0):
    med, lo, hi = spread(values)
    return f"{fmt(med, digits)} ({fmt(lo, digits)}–{fmt(hi, digits)})"


def ratio(value, base):
    return f"{value / base:.2f}x" if base else "–"


def paired_ratios(runs, base_runs):
    """each run's TPS over the base index's run of the same round"""
    base_tps = {r["run"]: float(r["tps"]) for r in base_runs}
    return [float(r["tps"]) / base_tps[r["run"]] for r in runs if base_tps.get(r["run"])]


def paired_ratio(runs, base_runs):
    """median (min–max) of paired_ratios"""
    ratios = paired_ratios(runs, base_runs)
    if not ratios:
        return "–"
    med, lo, hi = spread(ratios)
    return f"{med:.2f}x ({lo:.2f}–{hi:.2f})"


class Plotter:
    """Writes .dat files and one gnuplot script per plot; PNG via pngcairo."""

    def __init__(self, directory):
        self.dir = directory
        self.made = []

    def run(self, name, script, data, panel_rows=1):
        """Plot; panel_rows is the number of stacked panels (each gets 280 pixels at least)."""
        for dat_name, rows in data.items():
            with open(os.path.join(self.dir, dat_name), "w") as f:
                for row in rows:
                    f.write("\t".join(str(c) for c in row) + "\n")
        head = (f"set terminal pngcairo size 1200,{max(800, 280 * panel_rows)} font 'sans,10'\n"
                f"set output '{name}.png'\n"
                "set termoption noenhanced\nset grid ytics\nset key outside right top\n"
                "set datafile separator '\\t'\n")
        gp = os.path.join(self.dir, f"{name}.gp")
        with open(gp, "w") as f:
            f.write(head + script)
        try:
            subprocess.run(["gnuplot", f"{name}.gp"], cwd=self.dir, check=True,
                           capture_output=True, text=True)
        except (OSError, subprocess.CalledProcessError) as e:
            detail = getattr(e, "stderr", "") or str(e)
            sys.exit(f"gnuplot failed for {name}: {detail}")
        for dat_name in data:
            os.unlink(os.path.join(self.dir, dat_name))
        os.unlink(gp)
        self.made.append(f"{name}.png")


def clustered_bars(title, ylabel, categories, series, values, logscale=False):
    """gnuplot script and data for bars grouped by category, one colour per series."""
    rows = [["category"] + series]
    for cat in categories:
        rows.append([cat] + [values.get((cat, s), "NaN") for s in series])
    script = (f"set title '{title}'\nset ylabel '{ylabel}'\n"
              "set style data histograms\nset style histogram clustered gap 1\n"
              "set style fill solid 0.8 border -1\nset boxwidth 0.9\nset xtics rotate by -20\n"
              + ("set logscale y\n" if logscale else "set yrange [0:*]\n"))
    return script, rows


def no_index_section(groups, suites, out):
    """each index's insert TPS as a fraction of the same insert into the table without one"""
    keys = sorted((k for k in groups if k[2] != "none" and (k[0], k[1], "none") in groups),
                  key=lambda k: (suites.index(k[0]), k[1], kind_key(k[2])))
    if not keys:
        return
    out.append("### What an index costs an insert\n")
    out.append("TPS as a fraction of the same insert into the same table with no index (`none`, "
               "run in the same rounds): median TPS over the no-index median, and paired by round "
               "(min–max).\n")
    out.append("| suite | clients | index | of no-index TPS | paired |")
    out.append("|---|---:|---|---:|---:|")
    for suite, clients, kind in keys:
        g = groups[(suite, clients, kind)]
        base = groups[(suite, clients, "none")]
        out.append(f"| {suite} | {clients} | {kind} | "
                   f"{ratio(statistics.median(float(r['tps']) for r in g), statistics.median(float(r['tps']) for r in base))} | "
                   f"{paired_ratio(g, base)} |")
    out.append("")


def pgbench_section(directory, plot, out):
    rows = read_csv(directory, "pgbench.csv")
    if not rows:
        return
    groups = group_pgbench(rows)
    suites = [s for s in SUITE_TEXT if any(k[0] == s for k in groups)]

    def med(suite, clients, kind, field):
        g = groups.get((suite, clients, kind))
        return statistics.median(float(r[field]) for r in g) if g else None

    out.append("## pgbench: the same script against each index on identical tables\n")
    out.append("TPS is the median of the runs (min–max in brackets); the ratio is to the built-in "
               "index's median (btree; GiST for the spatial suites; for the `sh_` suites the local table, "
               "without the coordinator) in the same suite and client count. "
               "The paired ratio divides each run by the built-in index's run of the same round, "
               "which ran minutes apart at most, so the machine's slow drift cancels: median of "
               "the rounds (min–max). Latency is per transaction (pgbench's "
               "log, 20% sampled), median of the runs' percentiles. WAL is bytes per transaction "
               "from pg_stat_wal.\n")
    out.append("| suite | clients | index | TPS | vs built-in | paired | p50 ms | p99 ms | WAL B/xact |")
    out.append("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for suite in suites:
        clients_seen = sorted({k[1] for k in groups if k[0] == suite})
        for clients in clients_seen:
            base = med(suite, clients, base_kind(suite), "tps")
            kinds = sorted({k[2] for k in groups if k[0] == suite and k[1] == clients}, key=kind_key)
            for kind in kinds:
                g = groups[(suite, clients, kind)]
                tps = [float(r["tps"]) for r in g]
                out.append(f"| {suite} | {clients} | {kind} | {fmt_spread(tps)} | "
                           f"{ratio(statistics.median(tps), base) if kind != base_kind(suite) else '1.00x'} | "
                           f"{paired_ratio(g, groups.get((suite, clients, base_kind(suite)), [])) if kind != base_kind(suite) else ''} | "
                           f"{med(suite, clients, kind, 'p50_ms'):.3f} | "
                           f"{med(suite, clients, kind, 'p99_ms'):.3f} | "
                           f"{med(suite, clients, kind, 'wal_bytes_per_xact'):,.0f} |")
    out.append("")
    out.append("Suites: " + "; ".join(f"`{s}`: {SUITE_TEXT[s]}" for s in suites) + ".\n")
    no_index_section(groups, suites, out)

    # throughput vs clients, one panel per suite
    panels = []
    data = {}
    ncols = 3
    nrows = (len(suites) + ncols - 1) // ncols
    for i, suite in enumerate(suites):
        kinds = sorted({k[2] for k in groups if k[0] == suite}, key=kind_key)
        clients_seen = sorted({k[1] for k in groups if k[0] == suite})
        dat = f"tps_{suite}.dat"
        data[dat] = [["clients"] + kinds] + [
            [c] + [(lambda v: v if v is not None else "NaN")(med(suite, c, k, "tps")) for k in kinds]
            for c in clients_seen]
        panels.append(
            f"set title '{suite}'\nset xlabel 'clients'\nset ylabel 'transactions/s'\n"
            f"set xrange [{min(clients_seen) - 0.5}:{max(clients_seen) + 0.5}]\nset yrange [0:*]\n"
            f"set xtics 1\nplot for [i=2:{len(kinds) + 1}] '{dat}' using 1:i with linespoints "
            "lw 2 pt 7 title columnheader(i)\n")
    plot.run("throughput",
             f"set multiplot layout {nrows},{ncols} title 'pgbench throughput vs clients (median of runs)'\n"
             "set key inside left top\nset offsets 0, 0, graph 0.45, 0\n"
             + "".join(panels) + "unset multiplot\n", data, panel_rows=nrows)

    # latency percentiles at the largest client count of each suite
    for pct in ("p50", "p99"):
        values = {}
        series = sorted({k[2] for k in groups}, key=kind_key)
        for suite in suites:
            top = max(k[1] for k in groups if k[0] == suite)
            for kind in series:
                v = med(suite, top, kind, f"{pct}_ms")
                if v is not None:
                    values[(suite, kind)] = v
        script, rows_ = clustered_bars(
            f"{pct} latency per transaction at the largest client count (log scale)",
            "milliseconds", suites, series, values, logscale=True)
        plot.run(f"latency_{pct}",
                 script + f"plot for [i=2:{len(series) + 1}] 'lat.dat' using i:xtic(1) title columnheader(i)\n",
                 {"lat.dat": rows_})


def build_size_section(directory, plot, out):
    builds = read_csv(directory, "build.csv")
    sizes = read_csv(directory, "size.csv")
    if builds:
        by_kind = {kind: [float(r["seconds"]) for r in g]
                   for kind, g in group_by(builds, lambda r: r["kind"]).items()}
        rows_n = builds[0]["rows"]
        base = statistics.median(by_kind["btree"]) if "btree" in by_kind else None
        out.append(f"## CREATE INDEX on {int(rows_n):,} rows (int8, random order)\n")
        out.append("| index | seconds | vs btree |")
        out.append("|---|---:|---:|")
        kinds = sorted(by_kind, key=kind_key)
        for kind in kinds:
            out.append(f"| {kind} | {fmt_spread(by_kind[kind], 3)} | "
                       f"{ratio(statistics.median(by_kind[kind]), base)} |")
        out.append("")
        script, rows_ = clustered_bars(f"CREATE INDEX on {int(rows_n):,} rows (median of runs)",
                                       "seconds", kinds, ["seconds"],
                                       {(k, "seconds"): statistics.median(by_kind[k]) for k in kinds})
        plot.run("build", script + "set key autotitle columnhead\nset key off\nplot 'build.dat' using 2:xtic(1)\n",
                 {"build.dat": rows_})
    if sizes:
        out.append("## Index size right after the build\n")
        out.append("For btree and hash: pg_relation_size. For the pm_index indexes (`*_pm`): the pool's "
                   "PM bytes plus its share of the DRAM tier (pm_index_stats).\n")
        out.append("| index | PM or pages MB | DRAM MB | total MB | vs btree |")
        out.append("|---|---:|---:|---:|---:|")
        mb = {r["kind"]: (int(r["pm_or_page_bytes"]) / 2**20, int(r["dram_bytes"]) / 2**20) for r in sizes}
        base = sum(mb["btree"]) if "btree" in mb else None
        kinds = sorted(mb, key=kind_key)
        for kind in kinds:
            a, b = mb[kind]
            out.append(f"| {kind} | {a:,.1f} | {b:,.1f} | {a + b:,.1f} | {ratio(a + b, base)} |")
        out.append("")
        rows_ = [["index", "PM-or-pages", "DRAM"]] + [[k, mb[k][0], mb[k][1]] for k in kinds]
        plot.run("size",
                 "set title 'index size after the build'\nset ylabel 'MiB'\n"
                 "set style data histograms\nset style histogram rowstacked\n"
                 "set style fill solid 0.8 border -1\nset boxwidth 0.6\nset yrange [0:*]\n"
                 "set key autotitle columnhead\n"
                 "plot 'size.dat' using 2:xtic(1) title 'PM (*_pm) or pages', '' using 3 title 'DRAM tier'\n",
                 {"size.dat": rows_})


def data_build_section(directory, out, csv="spatial_build.csv", title="Spatial CREATE INDEX",
                          data_text="Data: `pts` uniform points, `clu` points around 300 towns of "
                                    "power-law sizes, `poly` small polygons; all in a 1000 x 1000 square; "
                                    "PostGIS geometry.",
                          base_kind_="gist", sizes_csv="spatial_size.csv", sized_data="pts"):
    """CREATE INDEX times per data set against the built-in base_kind_, and one data set's sizes"""
    builds = read_csv(directory, csv)
    sizes = read_csv(directory, sizes_csv) if sizes_csv else []
    if not builds:
        return
    out.append(f"## {title} on {int(builds[0]['rows']):,} rows\n")
    out.append(data_text + "\n")
    out.append(f"| data | index | seconds | vs {base_kind_} |")
    out.append("|---|---|---:|---:|")
    groups = group_by(builds, lambda r: (r["data"], r["kind"]))
    for data in list(OrderedDict.fromkeys(r["data"] for r in builds)):
        base = groups.get((data, base_kind_))
        base = statistics.median(float(r["seconds"]) for r in base) if base else None
        for kind in sorted({k[1] for k in groups if k[0] == data}, key=kind_key):
            secs = [float(r["seconds"]) for r in groups[(data, kind)]]
            out.append(f"| {data} | {kind} | {fmt_spread(secs, 3)} | "
                       f"{ratio(statistics.median(secs), base)} |")
    out.append("")
    for data in list(OrderedDict.fromkeys(r.get("data", sized_data) for r in sizes)):
        mb = {r["kind"]: (int(r["pm_or_page_bytes"]) + int(r["dram_bytes"])) / 2**20
              for r in sizes if r.get("data", sized_data) == data}
        out.append(f"Size of the `{data}` index after the build: " +
                   ", ".join(f"{k} {mb[k]:,.1f} MB ({ratio(mb[k], mb.get(base_kind_))})"
                             for k in sorted(mb, key=kind_key)) + ".\n")


def recovery_section(directory, plot, out):
    rows = read_csv(directory, "recovery.csv")
    if not rows:
        return
    groups = group_by(rows, lambda r: (int(r["entries"]), r["kind"]))
    out.append("## Recovery after `pg_ctl stop -m immediate` under insert load\n")
    out.append("server start: `pg_ctl start -w` until it accepts connections (WAL redo, same for "
               "all). first query: the first index scan of that table afterwards; for the pm_index "
               "indexes (`*_pm`) it includes rebuilding the DRAM tier from the pool and reconciling "
               "with the heap.\n")
    out.append("| entries | index | server start s | first query s |")
    out.append("|---:|---|---:|---:|")
    values = {}
    for (entries, kind) in sorted(groups, key=lambda k: (k[0], kind_key(k[1]))):
        g = groups[(entries, kind)]
        first = [float(r["first_query_s"]) for r in g]
        out.append(f"| {entries:,} | {kind} | {fmt_spread([float(r['server_start_s']) for r in g], 3)} | "
                   f"{fmt_spread(first, 3)} |")
        values[(f"{entries:,} entries", kind)] = statistics.median(first)
    out.append("")
    cats = [f"{e:,} entries" for e in sorted({k[0] for k in groups})]
    series = sorted({k[1] for k in groups}, key=kind_key)
    script, rows_ = clustered_bars("first index scan after kill -9 and restart (median of runs)",
                                   "seconds", cats, series, values)
    plot.run("recovery", script + f"plot for [i=2:{len(series) + 1}] 'rec.dat' using i:xtic(1) "
             "title columnheader(i)\n", {"rec.dat": rows_})


def cpu_section(directory, out):
    rows = read_csv(directory, "cpu.csv")
    if not rows:
        return
    out.append("## CPU by role in the insert suites\n")
    out.append("CPU milliseconds per transaction (user + system, bench/lib/cpusplit.py): the client "
               "backends', the replay workers' (tiered kinds and hash_pm: until what waits is "
               "applied) and the rest of the server's (WAL writer, checkpointer); median of the "
               "runs. What an index costs a transaction in CPU is its total against the no-index "
               "table's (`none`); where the clients have every core, that is what bounds TPS.\n")
    out.append("| suite | clients | index | clients ms | workers ms | other ms | total ms |")
    out.append("|---|---:|---|---:|---:|---:|---:|")
    groups = group_by(rows, lambda r: (r["suite"], int(r["clients"]), r["kind"]))
    for key in sorted(groups, key=lambda k: (k[0], k[1], kind_key(k[2]))):
        per_xact = {part: statistics.median(1000 * float(r[f"{part}_cpu_s"]) / max(int(r["xacts"]), 1)
                                            for r in groups[key])
                    for part in ("client", "worker", "other")}
        total = statistics.median(1000 * sum(float(r[f"{p}_cpu_s"]) for p in ("client", "worker", "other"))
                                  / max(int(r["xacts"]), 1) for r in groups[key])
        out.append(f"| {key[0]} | {key[1]} | {key[2]} | {per_xact['client']:.3f} | "
                   f"{per_xact['worker']:.3f} | {per_xact['other']:.3f} | {total:.3f} |")
    out.append("")


def first_query_section(directory, out):
    rows = read_csv(directory, "first_query.csv")
    if not rows:
        return
    out.append("## First query after a restart\n")
    out.append("`pm_index.startup_load_workers = 0`: no index is loaded before it is used, so the first "
               "point lookup of each table after `pg_ctl start -w` returns does whatever its index "
               "needs first (opening the pool, rebuilding a DRAM layer; after `-m immediate`, a crash, "
               "reconciling with the heap). Query time from psql's `\\timing`, connection excluded; "
               "server start: `pg_ctl start -w` until it accepts connections.\n")
    out.append("| stop | entries | index | server start s | first query ms |")
    out.append("|---|---:|---|---:|---:|")
    groups = group_by(rows, lambda r: (r["stop"], int(r["entries"]), r["kind"]))
    for key in sorted(groups, key=lambda k: (k[0], k[1], kind_key(k[2]))):
        g = groups[key]
        out.append(f"| {key[0]} | {key[1]:,} | {key[2]} | "
                   f"{fmt_spread([float(r['server_start_s']) for r in g], 3)} | "
                   f"{fmt_spread([float(r['first_query_ms']) for r in g], 1)} |")
    out.append("")


def range_cpu_section(directory, out):
    rows = read_csv(directory, "range_cpu.csv")
    if not rows:
        return
    out.append("## Range queries on the server, without clients\n")
    out.append("One backend runs each query (100 keys, `sum(v)`: heap fetches; `count(*)`: "
               "index-only) in a procedure, planned and committed one by one as pgbench's are; "
               "microseconds per query, medians of the runs. The scan: the part of it perf "
               "sampled under the executor's calls into the access method (`index_getnext_tid`, "
               "`index_getbitmap`). vs btree: btree's time over this one's. Without the scan: "
               "btree's time over btree's time less its scan, the most an index that cost "
               "nothing to scan could give the query.\n")
    out.append("| query | index | us per query | of it the scan | vs btree |")
    out.append("|---|---|---:|---:|---:|")
    groups = group_by(rows, lambda r: (r["query"], r["kind"]))
    for key in sorted(groups, key=lambda k: (k[0], kind_key(k[1]))):
        us = statistics.median(float(r["us_per_query"]) for r in groups[key])
        scans = [float(r["scan_us_per_query"]) for r in groups[key] if r["scan_us_per_query"]]
        scan = statistics.median(scans) if scans else None
        base = groups.get((key[0], "btree"))
        base_us = statistics.median(float(r["us_per_query"]) for r in base) if base else None
        out.append(f"| {key[0]} | {key[1]} | {us:.1f} | {'' if scan is None else f'{scan:.1f}'} | "
                   f"{'' if base_us is None else f'{base_us / us:.2f}x'} |")
        if key[1] == "btree" and scan is not None and us > scan:
            out.append(f"| {key[0]} | without the scan | {us - scan:.1f} | 0 | {us / (us - scan):.2f}x |")
    out.append("")


def ready_section(directory, out):
    rows = read_csv(directory, "ready.csv")
    if not rows:
        return
    out.append("## Ready after a restart\n")
    out.append("From `pg_ctl start` until `pm_index_indexes` shows every index of the database "
               "`ready` (its DRAM layer built by the startup load workers, "
               "`pm_index.startup_load_workers`), with no query touching the indexes: the longest "
               "a first query can wait for an index. Clean restarts, server start included.\n")
    out.append("| rows per table | indexes | load workers | ready s |")
    out.append("|---:|---:|---:|---:|")
    groups = group_by(rows, lambda r: (int(r["rows"]), int(r["indexes"]), int(r["workers"])))
    for key in sorted(groups):
        out.append(f"| {key[0]:,} | {key[1]} | {key[2]} | "
                   f"{fmt_spread([float(r['ready_s']) for r in groups[key]], 3)} |")
    out.append("")


WORKLOAD_ORDER = ["load", "recovery", "a", "b", "c", "d", "e", "f"]


def core_section(directory, plot, out):
    rows = read_csv(directory, "core.csv")
    if not rows:
        return
    groups = group_by(rows, lambda r: (r["workload"], r["dist"], int(r["threads"]), r["structure"],
                                       r["mode"], r["pool_fs"]))

    def order(k):
        wl = WORKLOAD_ORDER.index(k[0]) if k[0] in WORKLOAD_ORDER else 99
        return (wl, k[1], k[2], order_key(STRUCTURE_ORDER, k[3]), k[4], k[5])

    def median_of(g, field):
        vals = [float(r[field]) for r in g if r[field] != ""]
        return statistics.median(vals) if vals else None

    keys_n = int(rows[0]["keys"])
    ops_n = max(int(r["ops"]) for r in rows if r["workload"] not in ("load", "recovery"))
    out.append(f"## Core structures without a server (bench_ycsb: {keys_n:,} keys, {ops_n:,} ops per workload)\n")
    out.append("YCSB on an index of (key, TID) entries; NBTree (nbtree_pm's structure) and PhaST "
               "(phast_pm's) against a global-lock DRAM B+-tree written as a reference point "
               "(bench/README.md). Mops/s is the median of the runs (min–max); the ratio is the "
               "structure's median to the baseline's in the same workload, distribution and thread "
               "count. Latency in ns; flushes and fences per op: for the load, per insert. "
               "`recovery`: the DRAM tier rebuilt "
               "from the pool after the load, in million entries per second. Pool: `tmpfs-2m` is a "
               "tmpfs mounted huge=always (2 MiB pages, like a DAX mapping of PM); `tmpfs-4k` is "
               "/dev/shm.\n")
    out.append("| workload | dist | threads | structure | mode | pool | Mops/s | vs baseline | p50 | p99 | p999 | flushes/op | fences/op |")
    out.append("|---|---|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for key in sorted(groups, key=order):
        g = groups[key]
        mops = [float(r["mops"]) for r in g]
        base = groups.get((key[0], key[1], key[2], "baseline", "dram", key[5]))
        vs = ratio(statistics.median(mops), median_of(base, "mops")) if base and key[3] != "baseline" else ""
        lat = [median_of(g, f) for f in ("p50_ns", "p99_ns", "p999_ns")]
        lat_txt = " | ".join(fmt(v) if v is not None else "" for v in lat)
        out.append(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {key[4]} | {key[5]} | "
                   f"{fmt_spread(mops, 2)} | {vs} | {lat_txt} | "
                   f"{median_of(g, 'flushes_per_op'):.3f} | {median_of(g, 'fences_per_op'):.3f} |")
    out.append("")

    # one panel per distribution: workloads on x, a bar per structure and thread count
    main_pool = max({k[5] for k in groups}, key=lambda fs: sum(len(v) for k, v in groups.items() if k[5] == fs))
    panels, data = [], {}
    for dist in ("uniform", "zipf"):
        sel = {k: v for k, v in groups.items()
               if k[5] == main_pool and k[4] in ("eadr", "dram") and k[1] in (dist, "-", "latest")
               and k[0] != "recovery"}
        if not any(k[1] == dist for k in sel):
            continue
        series = sorted({(k[3], k[2]) for k in sel}, key=lambda x: (order_key(STRUCTURE_ORDER, x[0]), x[1]))
        names = [f"{s} {t} thr" for s, t in series]
        cats = [w for w in WORKLOAD_ORDER if any(k[0] == w for k in sel)]
        values = {}
        for k, v in sel.items():
            values[(k[0], f"{k[3]} {k[2]} thr")] = statistics.median(float(r["mops"]) for r in v)
        script, rows_ = clustered_bars(f"YCSB, {dist} keys ({main_pool}, eadr)", "Mops/s", cats, names, values)
        dat = f"core_{dist}.dat"
        data[dat] = rows_
        panels.append(script + f"plot for [i=2:{len(names) + 1}] '{dat}' using i:xtic(1) title columnheader(i)\n")
    if panels:
        plot.run("core", f"set multiplot layout {len(panels)},1\n" + "".join(panels) + "unset multiplot\n", data,
                 panel_rows=len(panels))


FBR_SHIPPED_CAP = 50


def fbrtree_section(directory, out):
    """bench_fbrtree's fan-out and split study: time per operation against the shipped fan-out"""
    rows = read_csv(directory, "fbrtree.csv")
    if not rows:
        return
    caps = sorted({int(r["cap"]) for r in rows})
    node_bytes = {int(r["cap"]): r["node_bytes"] for r in rows}
    # measures: (dist, how the tree was made, what was timed) -> cap -> values
    measures = defaultdict(lambda: defaultdict(list))
    nodes = defaultdict(list)  # (dist, made, window query, cap) -> nodes read per query
    for r in rows:
        made = "STR bulk load" if r["tree"] == "str" else f"inserts, {r['split']} split"
        cap = int(r["cap"])
        measures[(r["dist"], made, r["query"])][cap].append(float(r["us_per_query"]))
        if r["query"] != "knn10":
            nodes[(r["dist"], made, r["query"], cap)].append(float(r["nodes_per_query"]))
        elif r["tree"] == "str":  # one row per tree and run carries its build figures
            measures[(r["dist"], made, "build, s")][cap].append(float(r["build_s"]))
        else:
            measures[(r["dist"], made, "insert, µs each")][cap].append(float(r["insert_us"]))
    boxes = int(rows[0]["boxes"])
    out.append(f"## FBR-tree fan-out and split heuristic without a server (bench_fbrtree: {boxes:,} boxes)\n")
    out.append("Each fan-out is the structure compiled with that many entries per node "
               "(`make bench/bin/bench_fbrtree_capC`); the shipped one is "
               f"{FBR_SHIPPED_CAP}. One tree grown by inserts, one bulk-loaded (STR, 90% fill); "
               "square windows of 0.01/0.1/1% of the data square centred on data, and 10 nearest "
               "neighbours. µs per operation (median of the runs, min–max), nodes read per window "
               f"query, and time against {FBR_SHIPPED_CAP} entries (below 1.00x: faster).\n")
    head = " | ".join(f"{c} entries ({node_bytes[c]} B): µs | nodes | vs {FBR_SHIPPED_CAP}" for c in caps)
    out.append(f"| data | tree | measure | {head} |")
    out.append("|---|---|---|" + "---:|---:|---:|" * len(caps))
    for key in sorted(measures, key=lambda k: (k[0] != "uniform", k[1] != "STR bulk load", k[1], k[2])):
        per_cap = measures[key]
        base = statistics.median(per_cap[FBR_SHIPPED_CAP]) if per_cap.get(FBR_SHIPPED_CAP) else None
        cells = []
        for c in caps:
            vals = per_cap.get(c)
            if not vals:
                cells.append(" | | ")
                continue
            n = nodes.get(key + (c,))
            cells.append(f"{fmt_spread(vals, 2)} | {statistics.median(n):.1f} | " if n else f"{fmt_spread(vals, 2)} | | ")
            cells[-1] += ratio(statistics.median(vals), base) if c != FBR_SHIPPED_CAP else ""
        out.append(f"| {key[0]} | {key[1]} | {key[2]} | " + " | ".join(cells) + " |")
    out.append("")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: report.py RESULTS_DIR")
    directory = sys.argv[1]
    plot = Plotter(directory)
    out = ["# pm_index benchmark results\n"]
    machine = os.path.join(directory, "machine.txt")
    if os.path.exists(machine):
        with open(machine) as f:
            out.append("```\n" + f.read().strip() + "\n```\n")
    pgbench_section(directory, plot, out)
    build_size_section(directory, plot, out)
    recovery_section(directory, plot, out)
    ready_section(directory, out)
    first_query_section(directory, out)
    range_cpu_section(directory, out)
    cpu_section(directory, out)
    data_build_section(directory, out)
    data_build_section(directory, out, "pt_build.csv", "CREATE INDEX on `point`",
                          "Data: uniform points of PostgreSQL's `point` in a 1000 x 1000 square.",
                          sizes_csv=None)
    data_build_section(directory, out, "geo_build.csv", "Spatial CREATE INDEX",
                          "Data: `geography` points around GeoNames' 34,006 cities of 15,000 people or "
                          "more (bench/lib/cities.py), more around bigger cities; `3d` uniform PointZ "
                          "in a 1000 x 1000 x 1000 cube (GiST: gist_geometry_ops_nd; fbrtree_pm: "
                          "geometry_ops_nd).", sizes_csv=None)
    data_build_section(directory, out, "hk_build.csv", "Equality indexes: CREATE INDEX",
                          "Data: `u` uuid keys, `t` 32-character text keys in the default collation "
                          "(md5 of the row number), random order.", base_kind_="hash",
                          sizes_csv="hk_size.csv")
    core_section(directory, plot, out)
    fbrtree_section(directory, out)
    out.append("Plots: " + ", ".join(f"[{p}]({p})" for p in plot.made) + "\n")
    with open(os.path.join(directory, "summary.md"), "w") as f:
        f.write("\n".join(out))


if __name__ == "__main__":
    main()
