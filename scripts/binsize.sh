#!/usr/bin/env bash
# Where the bytes of the linux/arm64 fieldtapd go, by package prefix:
# `go tool nm -size -sort size` of a build with the same flags as `make
# cross` but its symbol table kept (-s -w strip it), each symbol's size
# summed under its package (standard library: first path element, e.g.
# crypto; fieldtap: three, e.g. fieldtap/services/sip; github.com and
# golang.org: three, the module; other hosts: two). Symbols cover code and
# data in the file: zeroed memory (.bss, .noptrbss, read from readelf of
# binutils) takes no bytes of it and is left out. The linker's own tables
# (function metadata, type links) appear under their linker names (go:,
# runtime).
#
#   scripts/binsize.sh [DIR] [N]   DIR: the source tree (default .), N: rows (default 25)
set -euo pipefail
dir=${1:-.}
rows=${2:-25}
bin=$(mktemp)
trap 'rm -f "$bin"' EXIT
(cd "$dir" && CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -trimpath -ldflags '-X main.version=size' -o "$bin" ./firmware/cmd/fieldtapd)
# Address ranges of the sections that take no file bytes.
nobits=$(readelf -SW "$bin" | awk '/NOBITS/ { for (i = 1; i <= NF; i++) if ($i == "NOBITS") printf "%s:%s ", $(i + 1), $(i + 3) }')
go tool nm -size -sort size "$bin" | awk -v rows="$rows" -v nobits="$nobits" '
	function hex(s,   i, v) { s = tolower(s); v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
	BEGIN { nr = split(nobits, r, " "); for (i = 1; i <= nr; i++) { split(r[i], ab, ":"); lo[i] = hex(ab[1]); hi[i] = lo[i] + hex(ab[2]) } }
	NF >= 4 {
		a = hex($1); zero = 0
		for (i = 1; i <= nr; i++) if (a >= lo[i] && a < hi[i]) zero = 1
		if (zero) next
		size = $2; name = $4
		for (i = 5; i <= NF; i++) name = name " " $i
		sub(/^(type:|go:itab\.\*?|go:link\.)/, "", name)
		sub(/^\*/, "", name)
		# The package path ends at the first dot after the last slash
		# of the part before any "(" or "[".
		# Type literals (struct { ... }, func(...), map[...]) name no
		# one package.
		if (name ~ /^(go:)?(struct|func|interface|map|chan|\[)[ ({\[]/) { sum["(type literals)"] += size; total += size; next }
		p = name; sub(/[(\[].*/, "", p)
		n = split(p, seg, "/")
		last = seg[n]; sub(/\..*/, "", last); seg[n] = last
		keep = 1
		if (seg[1] == "fieldtap" || seg[1] == "github.com" || seg[1] == "golang.org") keep = 3
		else if (seg[1] ~ /\./) keep = 2
		if (keep > n) keep = n
		pkg = seg[1]; for (i = 2; i <= keep; i++) pkg = pkg "/" seg[i]
		sum[pkg] += size; total += size
	}
	END {
		for (k in sum) printf "%d\t%s\n", sum[k], k | "sort -rn | head -" rows
		close("sort -rn | head -" rows)
		printf "%d\t(every symbol with file bytes)\n", total
	}'
