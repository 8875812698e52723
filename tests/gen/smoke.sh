#!/bin/sh
# make gen-smoke: the mm API generator's fixed seeds in three host builds, deterministic in the
# first two (one CPU at a time, or phases under PCT with fixed seeds; no free-running run) and
# on free-running threads under TSan. Ends with one "N passed, N failed, N skipped" line; a
# failure prints its seed, the replay command, the shrunk program and a test case.
build=${1:-build/host}
passed=0 failed=0
run() {	# variant, then mmtest --gen arguments
	v=$1; shift
	echo "== gen-smoke: $v $*"
	log=$build/$v/gen-smoke.log
	start=$(date +%s)
	ASAN_OPTIONS=detect_leaks=0 \
	TSAN_OPTIONS="halt_on_error=1 suppressions=$(dirname "$0")/../host/tsan.supp" \
		"$build/$v/mmtest" --gen "$@" >"$log" 2>&1
	status=$?
	grep -Ev '^gen: (seeds from|[0-9]+ s: )|^[0-9]+ passed, ' "$log" | head -n 400
	last=$(tail -n 1 "$log")
	case "$last" in
	*" passed, "*" failed, "*" skipped")
		p=${last%% passed*}; f=${last#*passed, }; f=${f%% failed*}
		passed=$((passed + p)); failed=$((failed + f))
		[ "$status" -ne 0 ] && [ "$f" -eq 0 ] && failed=$((failed + 1));;
	*)
		echo "$v: mmtest --gen died (status $status); see $log"
		failed=$((failed + 1));;
	esac
	echo "   ($(($(date +%s) - start)) s)"
}
# Programs of one CPU at a time (exact), then programs with phases of 2..4 CPUs under PCT.
run plain --seed 1 --seeds 24 --ops 100 --cpus 1 --keep-going --free-runs 0 --shrink-seconds 60
run plain --seed 1001 --seeds 12 --ops 80 --cpus 4 --keep-going --free-runs 0 --shrink-seconds 60
run asan --seed 2001 --seeds 10 --ops 80 --keep-going --free-runs 0 --shrink-seconds 60
run tsan --seed 3001 --seeds 5 --ops 60 --cpus 3 --sched free --verify-alone --keep-going --shrink-seconds 60
echo "$passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
