#!/usr/bin/env bash
# bench/whole-commands.sh BIN DIR — times the main commands of binary BIN
# on a copy of session DIR (in /tmp, caches removed first) and prints one
# Markdown row per command: wall, user CPU, peak RSS. Used for the
# before/after table in docs/BENCHMARKS.md:
#
#   go run ./bench/estimate-gen -n 200000 -o bench/out/s200k
#   go build -o /tmp/ctxfold . && bench/whole-commands.sh /tmp/ctxfold bench/out/s200k
set -uo pipefail
bin=$1; src=$2
d=/tmp/whole-$(basename $bin); rm -rf $d; cp -r $src $d; rm -rf $d/estimate.cache* $d/cache/estimate*
t() { /usr/bin/time -f '%e %U %M' -o /tmp/t.out "$@" >/dev/null 2>/tmp/t.err; awk '{printf "%.1f s | %.1f s | %.0f MB", $1, $2, $3/1024}' /tmp/t.out; }
echo "| verify | $(t $bin verify $d) |"
echo "| estimate, no caches | $(t $bin estimate $d --model gpt-4o --json) |"
rm -f $d/cache/estimate.view
echo "| estimate, count cache only | $(t $bin estimate $d --model gpt-4o --json) |"
echo "| render --format ids | $(t $bin render $d --format ids) |"
echo "| render --format text | $(t $bin render $d --format text) |"
echo "| render --format openai | $(t $bin render $d --format openai) |"
echo "| graph --format json (counts cached) | $(t $bin graph $d --format json --model gpt-4o) |"
echo "| graph (tree, counts cached) | $(t $bin graph $d --model gpt-4o) |"
echo "| compact --dry-run | $(t $bin compact $d --dry-run --model gpt-4o) |"
rm -rf $d
