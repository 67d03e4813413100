#!/usr/bin/env bash
# bench/cold.sh OLD NEW ROUNDS — issue 28's cold-path figures, old and new
# binaries interleaved in one run (the machine is shared: medians of ROUNDS):
# cold `import` of a generated 100 MB Claude Code transcript, cold
# `estimate FILE` (fresh cache: import + estimate), and `estimate FILE`
# after one appended turn. Prints wall, user, sys seconds and peak RSS
# (/usr/bin/time -v's maximum resident set) per run, then the medians.
#
#   go build -o /tmp/ctxfold-new . && bench/cold.sh /tmp/ctxfold-old /tmp/ctxfold-new 3
set -euo pipefail
old=$1; new=$2; rounds=${3:-3}
work=$(mktemp -d /tmp/cold-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/gen" ./bench/claudecode-gen
src=/work/shared/fixtures/external/claude-code/d-kimuson-claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl
[ -f "$src" ] || src=$(pwd)/../shared/fixtures/external/claude-code/d-kimuson-claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl
"$work/gen" -src "$src" -mb 100 -o "$work/s.jsonl"
echo "file: $(stat -c %s "$work/s.jsonl") bytes; uptime: $(uptime)"
measure() { # label bin args...: one line "label wall user sys rssKB"
	local label=$1; shift
	/usr/bin/time -f '%e %U %S %M' -o "$work/t" "$@" >"$work/out" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
	echo "$label $(cat "$work/t")" | tee -a "$work/results"
}
for r in $(seq "$rounds"); do
	for b in old new; do
		bin=$old; [ $b = new ] && bin=$new
		rm -rf "$work/imp-$b"
		measure "import-$b" "$bin" import "$work/s.jsonl" -o "$work/imp-$b"
		rm -rf "$work/cache-$b"; cp "$work/s.jsonl" "$work/f-$b.jsonl"
		XDG_CACHE_HOME=$work/cache-$b measure "estimate-cold-$b" "$bin" estimate "$work/f-$b.jsonl" --json
		"$work/gen" -append 1 -o "$work/f-$b.jsonl"
		XDG_CACHE_HOME=$work/cache-$b measure "estimate-append-$b" "$bin" estimate "$work/f-$b.jsonl" --json
		grep -o '"update":"[a-z]*"' "$work/out" | head -1
	done
	cmp "$work/imp-old/nodes.jsonl" "$work/imp-new/nodes.jsonl" && echo "round $r: nodes.jsonl identical"
	echo "uptime: $(uptime)"
done
echo "medians (wall s, user s, sys s, peak RSS KB):"
for k in import estimate-cold estimate-append; do
	for b in old new; do
		awk -v k="$k-$b" '$1==k {w[++n]=$2; u[n]=$3; s[n]=$4; m[n]=$5}
			function med(a, n,  i,j,t) { for (i=1;i<=n;i++) for (j=i+1;j<=n;j++) if (a[j]<a[i]) {t=a[i];a[i]=a[j];a[j]=t}; return a[int((n+1)/2)] }
			END {printf "%-22s %6.2f %6.2f %6.2f %8d  (n=%d)\n", k, med(w,n), med(u,n), med(s,n), med(m,n), n}' "$work/results"
	done
done
