#!/usr/bin/env bash
# bench/folder.sh BIN FILES MB — `estimate --json` over a folder of FILES
# generated Claude Code transcripts of MB megabytes each (issue 28: 1 GB in
# many files, e.g. 20 × 50), cold (fresh cache), then again unchanged; wall
# time and peak RSS (/usr/bin/time -v), and the summary line of the text
# output.
#
#   go build -o /tmp/ctxfold . && bench/folder.sh /tmp/ctxfold 20 50
set -euo pipefail
bin=$1; n=$2; mb=$3
work=$(mktemp -d /tmp/folder-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME=$work/cache
go build -o "$work/gen" ./bench/claudecode-gen
src=$(pwd)/../shared/fixtures/external/claude-code/d-kimuson-claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl
[ -f "$src" ] || src=/work/shared/fixtures/external/claude-code/d-kimuson-claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl
dir=$work/projects/-home-u-proj
mkdir -p "$dir"
for i in $(seq -w 1 "$n"); do "$work/gen" -src "$src" -mb "$mb" -o "$dir/s$i.jsonl"; done
echo "folder: $n files, $(du -sb "$dir" | cut -f1) bytes; uptime: $(uptime)"
run() {
	/usr/bin/time -v -o "$work/t" "$bin" estimate "$dir" "$@" >"$work/out" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
	echo "$(grep -c . "$work/out") lines; wall $(grep 'Elapsed (wall' "$work/t" | awk '{print $NF}'); user $(grep 'User time' "$work/t" | awk '{print $NF}') s; sys $(grep 'System time' "$work/t" | awk '{print $NF}') s; peak RSS $(grep 'Maximum resident' "$work/t" | awk '{print $NF}') KB"
}
echo "estimate --json FOLDER, cold: $(run --json --model claude-sonnet-4-5)"
echo "estimate --json FOLDER, unchanged: $(run --json --model claude-sonnet-4-5)"
run --model claude-sonnet-4-5 >/dev/null
echo "summary: $(tail -1 "$work/out")"
echo "uptime: $(uptime)"
