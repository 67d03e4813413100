#!/usr/bin/env bash
# bench/archive-memory.sh BIN N — the peak RSS of a first `archive` over N
# copies (each its own session id) of one generated 40 MB Claude Code
# transcript under a temporary HOME (docs/BENCHMARKS.md, "The first
# archive's memory"). LIMIT=200MiB runs it under that GOMEMLIMIT.
#
#   go build -o /tmp/ctxfold . && for n in 6 24 48 96; do bench/archive-memory.sh /tmp/ctxfold $n; done
set -euo pipefail
bin=$1; n=${2:-24}
work=$(mktemp -d /tmp/archive-memory.XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/gen" ./bench/claudecode-gen
src=/work/shared/fixtures/external/claude-code/d-kimuson-claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl
[ -f "$src" ] || src=$(pwd)/../shared/fixtures/external/claude-code/d-kimuson-claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl
export HOME=$work/home XDG_CACHE_HOME=$work/cache XDG_DATA_HOME=$work/data
"$work/gen" -src "$src" -mb 40 -o "$work/one.jsonl"
for i in $(seq "$n"); do
	id=$(printf '%08x' "$i")
	mkdir -p "$HOME/.claude/projects/-p$i"
	sed "s/5c0375b4/$id/g" "$work/one.jsonl" >"$HOME/.claude/projects/-p$i/$id-0000-4000-8000-000000000001.jsonl"
done
echo "files: $n, $(du -sb "$HOME" | cut -f1) bytes; uptime: $(uptime)"
env ${LIMIT:+GOMEMLIMIT=$LIMIT} /usr/bin/time -f 'first archive: %e s wall, %U s user, peak RSS %M KB' "$bin" archive >/dev/null
