#!/usr/bin/env bash
# bench/import-identical.sh OLD NEW — issue 28's "nodes.jsonl byte-identical
# to the current importer's": imports every shared real transcript
# (/work/shared/fixtures/external, or $CTXFOLD_EXTERNAL) and every
# real-client recording under testdata/interop with both binaries, plus the
# generated transcripts named in $EXTRA (space-separated), and compares
# nodes.jsonl, session.json (but for its timestamps) and the exit status.
#
#   git worktree add /tmp/old 19620b9 && (cd /tmp/old && go build -o /tmp/ctxfold-old .)
#   go build -o /tmp/ctxfold-new . && bench/import-identical.sh /tmp/ctxfold-old /tmp/ctxfold-new
set -uo pipefail
old=$1; new=$2
ext=${CTXFOLD_EXTERNAL:-/work/shared/fixtures/external}
work=$(mktemp -d /tmp/import-identical.XXXXXX)
trap 'rm -rf "$work"' EXIT
mapfile -t files < <( { find "$ext" testdata/interop -type f \( -name '*.jsonl' -o -name '*.json' \) \
	! -path '*/subagents/*' ! -path '*/requests/*' ! -name 'MANIFEST*' 2>/dev/null; for f in ${EXTRA:-}; do echo "$f"; done; } | sort)
same=0; differ=0
for f in "${files[@]}"; do
	for b in old new; do
		bin=$old; [ $b = new ] && bin=$new
		rm -rf "$work/$b"
		"$bin" import "$f" -o "$work/$b" --json >"$work/$b.out" 2>"$work/$b.err"; echo $? >"$work/$b.rc"
	done
	ok=1
	cmp -s "$work/old.rc" "$work/new.rc" || ok=0
	if [ -f "$work/old/nodes.jsonl" ] || [ -f "$work/new/nodes.jsonl" ]; then
		cmp -s "$work/old/nodes.jsonl" "$work/new/nodes.jsonl" || ok=0
	fi
	if [ $ok = 1 ]; then same=$((same+1)); else differ=$((differ+1)); echo "DIFFERS: $f (exit $(cat $work/old.rc) vs $(cat $work/new.rc))"; fi
done
echo "$same of ${#files[@]} inputs imported to identical nodes.jsonl (and exit status); $differ differ"
[ $differ = 0 ]
