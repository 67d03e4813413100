#!/usr/bin/env bash
# bench/archive.sh BIN FILES MB — issue 43's figures (docs/BENCHMARKS.md,
# "archive"): FILES generated Claude Code transcripts of MB each (real turns
# replicated, bench/claudecode-gen) under a temporary HOME. Measures a cold
# `import` of every file (one process each, as a user would) against the
# first `archive` of them all; an unchanged `archive`; `archive` after one
# turn is appended to one file; and `search --archive` of a word only that
# turn holds against `grep -rF` over the transcripts (page cache warm for
# both), with the hits of each. Prints wall seconds, peak RSS (KB) and
# user and system CPU seconds (the machine may be shared: CPU is the
# figure a load does not inflate).
#
#   go build -o /tmp/ctxfold . && bench/archive.sh /tmp/ctxfold 25 40
set -euo pipefail
bin=$1; files=${2:-25}; mb=${3:-40}
work=$(mktemp -d /tmp/archive-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/gen" ./bench/claudecode-gen
src=/work/shared/fixtures/external/claude-code/d-kimuson-claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl
[ -f "$src" ] || src=$(pwd)/../shared/fixtures/external/claude-code/d-kimuson-claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl
export HOME=$work/home XDG_CACHE_HOME=$work/cache XDG_DATA_HOME=$work/data
for i in $(seq "$files"); do
	mkdir -p "$HOME/.claude/projects/-p$i"
	"$work/gen" -src "$src" -mb "$mb" -o "$HOME/.claude/projects/-p$i/0000000$i-0000-4000-8000-000000000001.jsonl"
done
echo "files: $files x $mb MB = $(du -sb "$HOME" | cut -f1) bytes; uptime: $(uptime)"
measure() { # label cmd...: "label wall rssKB"
	local label=$1; shift
	/usr/bin/time -f '%e %M %U %S' -o "$work/t" "$@" >"$work/out" 2>"$work/err" || { [ "$label" = grep ] || { cat "$work/err" >&2; exit 1; }; }
	echo "$label $(cat "$work/t")"
}
measure import sh -c 'n=0; for f in $(find "$HOME" -name "*.jsonl"); do n=$((n+1)); "$0" import "$f" -o "$1/imp/$n" >/dev/null; done' "$bin" "$work"
rm -rf "$work/imp"
measure archive-first "$bin" archive --json; cat "$work/out"
measure archive-unchanged "$bin" archive --json; cat "$work/out"
one=$(find "$HOME" -name '*.jsonl' | head -1)
python3 - "$one" <<'PY'
import json, sys
p = sys.argv[1]
last = user = None
for l in reversed(open(p).read().strip().split('\n')):
    m = json.loads(l)
    if 'uuid' not in m: continue
    last = last or m
    if user is None and m.get('type') == 'user' and isinstance(m['message'].get('content'), str): user = m
    if last and user: break
user.update(parentUuid=last['uuid'], uuid='ffffffff-0000-4000-8000-00000000abcd',
            message={'role': 'user', 'content': 'zanzibarquux one more turn'})
open(p, 'a').write(json.dumps(user) + '\n')
PY
measure archive-appended "$bin" archive --json; cat "$work/out"
for r in 1 2 3; do
	measure grep grep -rF zanzibarquux "$HOME"; echo "  grep lines: $(wc -l <"$work/out")"
	measure search "$bin" search --archive zanzibarquux; echo "  search hits: $(wc -l <"$work/out")"
done
