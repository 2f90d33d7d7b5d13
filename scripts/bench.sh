#!/usr/bin/env bash
# `make bench`: every in-process benchmark once, with allocations. A
# benchmark that skips (the reference-data ones when ../shared/testdata is
# absent) is named at the end with its reason instead of vanishing, which
# is what `go test -bench` without -v does.
set -uo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
go test -run '^$' -bench "${BENCH:-.}" -benchmem -count 1 -v ./... >"$log" 2>&1
status=$?
# The benchmark table without -v's per-benchmark name lines and skip notes.
grep -vE '^(Benchmark[^ 	]*|--- SKIP: .*|    .*)$' "$log"
skipped=$(grep -cE '^--- SKIP: Benchmark' "$log")
ran=$(grep -cE '^Benchmark[^ 	]*-[0-9]+[ 	]' "$log")
if [ "$skipped" -gt 0 ]; then
	echo
	echo "bench: $skipped skipped:"
	awk '/^Benchmark[^ \t]*$/ { name=$1; note="" } /^    / { sub(/^    /, ""); sub(/: it is kept outside.*/, ""); note=$0 } /^--- SKIP: Benchmark/ { print "  " $3 ": " note }' "$log"
fi
echo "bench: $ran ran, $skipped skipped"
exit "$status"
