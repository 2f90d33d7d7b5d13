#!/usr/bin/env bash
# `make test`: lint, every unit and end-to-end test, every benchmark run
# once (a benchmark that no longer works fails here, not on the day it is
# measured; no figure is read), short fuzz runs of every parser, then one
# summary line:
#
#   test: N passed, N failed (P packages, F fuzz targets, lint ok, benchmarks ok)
#
# Every step runs even when an earlier one failed, so one failure does not
# hide another; the exit status is non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-5s}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0

lint=ok
if ! make --no-print-directory lint; then
	lint=FAILED
	status=1
fi

go test -count=1 ./... 2>&1 | tee "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
pkg_ok=$(grep -cE '^ok[[:space:]]' "$log")
pkg_fail=$(grep -cE '^FAIL[[:space:]]+fieldtap' "$log")
# A package that does not build prints no FAIL line of its own for its
# tests; go test's non-zero exit above still counts.

benchmarks=ok
if ! go test -run '^$' -bench . -benchtime 1x ./... >"$log" 2>&1; then
	grep -E '^(--- FAIL|FAIL|    )' "$log"
	benchmarks=FAILED
	status=1
fi

./scripts/fuzz-all.sh "$fuzztime" 2>&1 | tee "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fuzz_ok=$(grep -cE '^fuzz ok ' "$log")
fuzz_fail=$(grep -cE '^fuzz FAIL ' "$log")

passed=$((pkg_ok + fuzz_ok))
failed=$((pkg_fail + fuzz_fail))
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
	failed=1 # a build or lint failure that no package line counted
fi
echo "test: $passed passed, $failed failed ($((pkg_ok + pkg_fail)) packages, $((fuzz_ok + fuzz_fail)) fuzz targets, lint $lint, benchmarks $benchmarks)"
exit "$status"
