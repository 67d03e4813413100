#!/usr/bin/env bash
# bench/append-turns.sh N BIN... — `estimate FILE --json` after one
# appended turn, in steady state (the refresh from a resume point, not the
# first after the cold import), for each binary interleaved: each has its
# own copy of a generated 100 MB Claude Code transcript and its own cache,
# warmed by a cold estimate and one appended turn; then N times, for each
# binary in turn, one more turn is appended and timed. Prints the median
# and 90th percentile wall (ms, date) and the median CPU (user + sys,
# /usr/bin/time) per binary. A BIN of
# the form "ENV=VALUE;/path" runs it with that environment.
#
#   go build -o /tmp/ctxfold-new . && bench/append-turns.sh 12 /tmp/ctxfold-old /tmp/ctxfold-new
set -euo pipefail
n=$1; shift
w=$(mktemp -d /tmp/append-turns.XXXXXX)
trap 'rm -rf "$w"' EXIT
go build -o "$w/gen" ./bench/claudecode-gen
src=$(pwd)/../shared/fixtures/external/claude-code/d-kimuson-claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl
[ -f "$src" ] || src=/work/shared/fixtures/external/claude-code/d-kimuson-claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl
"$w/gen" -src "$src" -mb 100 -o "$w/s.jsonl"
run() { # k spec file: runs the spec's binary on the file with cache k
	local k=$1 spec=$2 file=$3 e="" b=$2
	case $spec in *\;*) e=${spec%%;*}; b=${spec#*;} ;; esac
	env $e XDG_CACHE_HOME="$w/c$k" "${@:4}" "$b" estimate "$file" --json
}
k=0
for spec in "$@"; do
	k=$((k + 1)); cp "$w/s.jsonl" "$w/f$k.jsonl"
	run $k "$spec" "$w/f$k.jsonl" > /dev/null
	"$w/gen" -src "$src" -append 1 -o "$w/f$k.jsonl"; run $k "$spec" "$w/f$k.jsonl" > /dev/null
done
echo "uptime: $(uptime)"
for _ in $(seq "$n"); do
	k=0
	for spec in "$@"; do
		k=$((k + 1))
		"$w/gen" -src "$src" -append 1 -o "$w/f$k.jsonl"
		a=$(date +%s%N)
		run $k "$spec" "$w/f$k.jsonl" /usr/bin/time -f "%U %S" -o "$w/t" > "$w/out"
		z=$(date +%s%N)
		grep -q '"update":"appended"' "$w/out" || { echo "turn not appended incrementally" >&2; exit 1; }
		echo "$k $(( (z - a) / 1000000 )) $(awk '{printf "%d", ($1 + $2) * 1000}' "$w/t")" >> "$w/res"
	done
done
echo "uptime: $(uptime)"
k=0
for spec in "$@"; do
	k=$((k + 1))
	awk -v k=$k -v s="$spec" '$1 == k {w[++m] = $2; c[m] = $3}
		function sorted(a, n,  i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } }
		END {sorted(w, m); sorted(c, m)
			printf "%-40s n=%d  wall median %d ms (p90 %d)  CPU median %d ms\n", s, m, w[int((m + 1) / 2)], w[int(m * 0.9 + 0.5)], c[int((m + 1) / 2)]}' "$w/res"
done
