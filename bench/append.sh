#!/usr/bin/env bash
# bench/append.sh BIN SRC [N] — N (default 1000) single `BIN append` calls,
# each its own process, on a copy of session SRC (in /tmp). One append
# before the timing gives the copy its hash chain and index snapshot (an
# old session's first write indexes it whole); it is timed apart. Prints a
# Markdown row: the first write, then the N appends' total wall time, mean
# wall time and mean CPU time (user + system) per append.
#
#   go run ./bench/estimate-gen -n 1000000 -o /tmp/bench/s1m
#   go run ./bench/estimate-gen -n 1000 -o /tmp/bench/s1k
#   go build -o /tmp/ctxfold . && bench/append.sh /tmp/ctxfold /tmp/bench/s1m 1000
set -euo pipefail
bin=$1; src=$2; n=${3:-1000}
d=/tmp/append-bench-$(basename "$src"); rm -rf "$d"; cp -r "$src" "$d"
now() { date +%s.%N; }
t0=$(now)
"$bin" append "$d" --role user --content "first write" >/dev/null
t1=$(now)
cpu0=$(awk '{print $14+$15+$16+$17}' /proc/$$/stat)
for i in $(seq "$n"); do
	"$bin" append "$d" --role user --content "append number $i of the benchmark" >/dev/null
done
t2=$(now)
# Children's user+system ticks of this shell (the appends; fields 16, 17).
cpu1=$(awk '{print $14+$15+$16+$17}' /proc/$$/stat)
hz=$(getconf CLK_TCK)
awk -v a="$t0" -v b="$t1" -v c="$t2" -v n="$n" -v s="$(basename "$src")" -v cpu=$((cpu1 - cpu0)) -v hz="$hz" \
	'BEGIN { printf "| %s | %.2f s | %d | %.1f s | %.1f ms | %.1f ms |\n", s, b-a, n, c-b, (c-b)*1000/n, cpu/hz*1000/n }'
rm -rf "$d"
