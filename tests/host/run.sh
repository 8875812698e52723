#!/bin/sh
# Run the four host test builds (plain, ASan+UBSan, TSan on the concurrent tests, release:
# CONFIG_DEBUG_VM=0, poisoning off) and end with one "N passed, N failed, N skipped" line for
# all of them. Exit status 1 if anything
# failed. A race test whose window was never entered is a skip, listed with its reason.
build=${1:-build/host}
passed=0 failed=0 skipped=0
for v in plain asan tsan release; do
	args=
	[ "$v" = tsan ] && args=-c
	echo "== host tests: $v $args"
	log=$build/$v/test.log
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(dirname "$0")/tsan.supp" \
		"$build/$v/mmtest" $args >"$log" 2>&1
	status=$?
	grep -Ev '^ *(ok [^#]*|KTAP version 1|1\.\.[0-9]+|# Subtest: .*|# [a-z_]+: [0-9]+ passed, .*)$' "$log"
	last=$(tail -n 1 "$log")
	case "$last" in
	*" passed, "*" failed, "*" skipped")
		p=${last%% passed*}; f=${last#*passed, }; f=${f%% failed*}
		s=${last#*failed, }; s=${s%% skipped}
		passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
		[ "$status" -ne 0 ] && [ "$f" -eq 0 ] && failed=$((failed + 1));;
	*)
		echo "$v: the test binary died (status $status); see $log"
		failed=$((failed + 1));;
	esac
done
# The ACPI parser's test program: one test, passed if it reports no failed check.
if [ -x "$build/acpi_test" ]; then
	echo "== host tests: acpi_test"
	if "$build/acpi_test" >"$build/acpi_test.log" 2>&1; then
		passed=$((passed + 1)); tail -n 1 "$build/acpi_test.log"
	else
		failed=$((failed + 1)); echo "not ok acpi_test"; tail -20 "$build/acpi_test.log"
	fi
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
