#!/usr/bin/env bash
# `make race`: every package's tests under the race detector, ending with
# one line `race: N passed, N failed (P packages in S s)` (.ci/run counts
# it). cgo is on for the test binaries only: the race runtime links
# against libc. The daemons the end-to-end tests start are built by their
# TestMain as the product is, without cgo and without -race, so the
# detector watches the test processes (every in-process test, fuzz seeds
# included), not those daemons.
set -uo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# raceTimeout bounds one package's binary: the end-to-end package runs
# for minutes, and the detector slows what runs in process.
raceTimeout=30m
start=$(date +%s)
CGO_ENABLED=1 go test -race -count=1 -timeout "$raceTimeout" ./... 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
ok=$(grep -cE '^ok[[:space:]]' "$log")
failed=$(grep -cE '^FAIL[[:space:]]+fieldtap' "$log")
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
	failed=1 # a build failure that no package line counted
fi
echo "race: $ok passed, $failed failed ($((ok + failed)) packages in $(($(date +%s) - start)) s)"
exit "$status"
