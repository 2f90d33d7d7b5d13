#!/usr/bin/env bash
# Runs every Fuzz target in the module for a short time each (default 10s),
# one at a time, as `go test -fuzz` requires.
set -euo pipefail
fuzztime=${1:-10s}
cd "$(dirname "$0")/.."
status=0
while IFS= read -r file; do
	pkg=./$(dirname "$file")
	for target in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)\(' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/'); do
		echo "fuzz $pkg $target ($fuzztime)"
		if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" >/tmp/fuzz.$$ 2>&1; then
			cat /tmp/fuzz.$$
			status=1
		fi
	done
done < <(find . -name '*_test.go' -not -path './bin/*' -print0 | xargs -0 grep -l '^func Fuzz' | sort || true)
rm -f /tmp/fuzz.$$
exit $status
