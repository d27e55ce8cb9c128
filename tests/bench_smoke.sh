#!/usr/bin/env bash
# Smoke test of bench/ for tests/run (TAP): every script and benchmark starts, checks its
# arguments and writes what it should, in a few seconds. It measures nothing.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${TMPDIR:-/tmp}/bench_smoke.$$
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
# shellcheck source=tests/lib/tap.sh
. "$ROOT/tests/lib/tap.sh"
echo "1..19"

"$ROOT/bench/run" --help >"$WORK/help" 2>&1
ok $? "bench/run --help exits 0"
grep -q -- '--quick' "$WORK/help"
ok $? "bench/run --help describes --quick"

"$ROOT/bench/run" --only no_such_suite >/dev/null 2>&1
ok $(($? == 2 ? 0 : 1)) "bench/run rejects an unknown suite with exit status 2"

"$ROOT/bench/demo" --help >/dev/null 2>&1
ok $? "bench/demo --help exits 0"
"$ROOT/bench/demo" --help 2>&1 | grep -q -- '--port P] \[--dir DIR\]'
ok $? "bench/demo --help describes --port and --dir"
bad=0
for args in "--port 80" "--port 5432x" "--port" "--dir" "--rows 0"; do
	# shellcheck disable=SC2086 # each case is several words
	"$ROOT/bench/demo" --no-install $args >/dev/null 2>&1
	rc=$?
	((rc == 2)) || { echo "# bench/demo $args: exit status $rc"; bad=$((bad + 1)); }
done
mkdir -p "$WORK/demo_dir" && touch "$WORK/demo_dir/taken"
"$ROOT/bench/demo" --no-install --dir "$WORK/demo_dir" >/dev/null 2>&1
rc=$?
((rc == 2)) || { echo "# bench/demo --dir (not empty): exit status $rc"; bad=$((bad + 1)); }
ok $bad "bench/demo refuses a bad --port, a --dir that is not empty and bad counts with exit status 2"

"$ROOT/bench/sizes" --help >/dev/null 2>&1
ok $? "bench/sizes --help exits 0"
"$ROOT/bench/sizes" --no-install --rows 0 >/dev/null 2>&1
ok $(($? == 2 ? 0 : 1)) "bench/sizes refuses a bad count with exit status 2"

"$ROOT/bench/bin/bench_nbtree" --keys 20000 --threads 2 --dir "$WORK" >"$WORK/nbtree.csv"
ok $(($? == 0 && $(grep -c '^search,' "$WORK/nbtree.csv") == 2 ? 0 : 1)) \
	"bench_nbtree runs and reports a search phase per thread count"

"$ROOT/bench/bin/bench_nbtree_batch" --sizes 20000 --batch 512 --dir "$WORK" >"$WORK/batch.txt"
ok $(($? == 0 && $(grep -c ' nbt_insert_sorted ' "$WORK/batch.txt") == 1 ? 0 : 1)) \
	"bench_nbtree_batch runs and reports the batch insert"

"$ROOT/bench/bin/bench_ycsb" --keys 20000 --ops 20000 --threads 2 --dist zipf --dir "$WORK" >"$WORK/ycsb.csv"
# (7 workloads x 2 structures + NBTree's recovery row) x 2 thread counts, and the header
ok $(($? == 0 && $(wc -l <"$WORK/ycsb.csv") == 31 ? 0 : 1)) \
	"bench_ycsb runs every workload on both structures at 1 and 2 threads (self-checked)"

"$ROOT/bench/bin/bench_fbrtree" --boxes 20000 --queries 50 --split rstar,quadratic --dir "$WORK" >"$WORK/fbr.csv"
# 2 data sets x (R* tree + STR tree + quadratic tree) x 4 queries, and the header
ok $(($? == 0 && $(wc -l <"$WORK/fbr.csv") == 25 ? 0 : 1)) \
	"bench_fbrtree runs both split heuristics and the bulk load on both data sets (self-checked)"

"$ROOT/bench/bin/bench_platform" --threads 2 --ops 1000 --dir "$WORK" >"$WORK/platform.csv"
# alloc/free at 1 and 2 threads, 2 epoch benchmarks at 1 and 2 threads, persist in 3 modes
ok $(($? == 0 && $(grep -c '^[a-z_]*,[12],[0-9]*,' "$WORK/platform.csv") == 9 &&
	$(grep -c '^persist_line_' "$WORK/platform.csv") == 3 ? 0 : 1)) \
	"bench_platform runs every primitive and each persistence mode"

# Counts that atol/atoi used to read as a number (or 0): each must be a usage error. The other
# arguments keep a regressed parser's run small.
bad=0
for args in "bench_ycsb --ops 100 --keys 1000x" "bench_ycsb --keys 1000 --threads 2x" \
	"bench_nbtree --keys 100x" "bench_nbtree --keys 100 --threads 65" \
	"bench_nbtree_batch --sizes 1000,100x" "bench_nbtree_batch --sizes 1000 --batch 0" \
	"bench_fbrtree --queries 5 --boxes 5x" "bench_platform --threads 2 --ops 10"; do
	timeout 60 "$ROOT/bench/bin/"$args --dir "$WORK" >/dev/null 2>&1
	rc=$?
	((rc == 2)) || { echo "# $args: exit status $rc"; bad=$((bad + 1)); }
done
ok $bad "the core benchmarks refuse malformed or out-of-range counts with exit status 2"

# a fan-out variant, built as bench/run builds it
make -s -C "$ROOT" bench/bin/bench_fbrtree_cap25 >"$WORK/make.log" 2>&1 &&
	"$ROOT/bench/bin/bench_fbrtree_cap25" --boxes 20000 --queries 50 --dist clustered --dir "$WORK" >"$WORK/fbr25.csv"
ok $(($? == 0 && $(grep -c '^25,1024,clustered,' "$WORK/fbr25.csv") == 8 ? 0 : 1)) \
	"bench_fbrtree builds and runs with 25 entries per node in 1 KiB nodes"

# The report, on the CSVs above and a few fabricated pgbench/build/size/recovery rows.
R="$WORK/results"
mkdir -p "$R"
{
	echo "pool_fs,run,$(head -n 1 "$WORK/ycsb.csv")"
	tail -n +2 "$WORK/ycsb.csv" | sed 's/^/tmpfs-4k,1,/'
} >"$R/core.csv"
{
	echo "run,$(head -n 1 "$WORK/fbr.csv")"
	tail -n +2 "$WORK/fbr.csv" | sed 's/^/1,/'
	tail -n +2 "$WORK/fbr25.csv" | sed 's/^/1,/'
} >"$R/fbrtree.csv"
printf '%s\n' "suite,kind,clients,run,tps,xacts,p50_ms,p99_ms,wal_bytes_per_xact" \
	"point,btree,1,1,100,200,0.1,0.2,0" "point,nbtree_pm,1,1,110,220,0.1,0.2,0" \
	"point,btree,2,1,180,360,0.1,0.3,0" "point,nbtree_pm,2,1,200,400,0.1,0.3,0" >"$R/pgbench.csv"
printf '%s\n' "kind,rows,run,seconds" "btree,1000,1,0.5" "nbtree_pm,1000,1,0.3" >"$R/build.csv"
printf '%s\n' "kind,rows,pm_or_page_bytes,dram_bytes" "btree,1000,8192,0" "nbtree_pm,1000,4096,1024" >"$R/size.csv"
printf '%s\n' "kind,entries,run,server_start_s,first_query_s" "btree,1000,1,0.5,0.001" \
	"nbtree_pm,1000,1,0.5,0.01" >"$R/recovery.csv"
python3 "$ROOT/bench/lib/report.py" "$R" >"$WORK/report.log" 2>&1
ok $? "report.py writes summary.md from a results folder"
python3 "$ROOT/bench/lib/paired.py" point 2 nbtree_pm "$R" "$R" >"$WORK/paired.txt" 2>&1
grep -q '^pooled: 2 rounds, median 1.111x (95% interval 1.111-1.111)' "$WORK/paired.txt"
ok $? "paired.py pools the paired ratios of two folders"
grep -q '^| clustered | STR bulk load | knn10 | .* | [0-9]\.[0-9][0-9]x | .* |  |$' "$R/summary.md" 2>/dev/null
ok $? "summary.md compares the fan-outs (25 entries against the shipped 50)"
pngs=0
for p in throughput latency_p50 latency_p99 build size recovery core; do
	[[ -s "$R/$p.png" ]] && grep -q "($p.png)" "$R/summary.md" && pngs=$((pngs + 1))
done
ok $((pngs == 7 ? 0 : 1)) "report.py draws all 7 plots and links them ($pngs found)"
