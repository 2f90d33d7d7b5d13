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
# MCP overhead against a peer (issue #39): fieldtapd's CPU per
# list_dialogs call outside the handler (the end-to-end figure less the
# handler's own in mcp's BenchmarkListDialogs100k/default_page) against
# what mcppeer, a minimal mcp-go server, spends sending the same answer
# over the same transport in the same run.
awk '
	function metric(unit,   i) { for (i = 3; i < NF; i++) if ($(i + 1) == unit) return $i; return "" }
	/^BenchmarkListDialogs100k\/default_page-/ { handler = metric("cpu-ns/op") / 1e6 }
	/^BenchmarkToolCallEndToEnd\/(stdio|http)\/list_dialogs-/ { split($1, p, "/"); ours[p[2]] = metric("server-cpu-ms/call") }
	/^BenchmarkToolCallEndToEnd\/peer\/(stdio|http)\/list_dialogs_answer-/ { split($1, p, "/"); peer[p[3]] = metric("server-cpu-ms/call") }
	END {
		if (handler == "") exit
		for (t in ours) if (t in peer && peer[t] > 0)
			printf "mcp overhead, %s: fieldtapd %.3f ms a list_dialogs call outside the handler (%.3f - %.3f), mcppeer %.3f ms for the same answer: %.2fx (goal <= 1.25x)\n",
				t, ours[t] - handler, ours[t], handler, peer[t], (ours[t] - handler) / peer[t]
	}' "$log"
echo "bench: $ran ran, $skipped skipped"
exit "$status"
