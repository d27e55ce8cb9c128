# TAP output for the shell suites (tests/bench_smoke.sh, tests/package.sh): "ok N - what" or
# "not ok N - what" from a command's exit status, numbered in order.
N=0
ok() { # status description
	N=$((N + 1))
	if (($1 == 0)); then echo "ok $N - $2"; else echo "not ok $N - $2"; fi
}
