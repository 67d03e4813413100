#!/usr/bin/env bash
# bench/statusline-peers.sh BIN MB — the status line on a generated
# MB-megabyte Claude Code transcript (bench/claudecode-gen), cold (fresh
# cache), after one appended turn and unchanged, beside ccusage's
# statusline (CCUSAGE=path to its bin; skipped when unset). The transcript
# lies in a fresh CLAUDE_CONFIG_DIR's projects folder, where ccusage looks.
#
# ccusage 17 (npm install ccusage@17 in a cache directory: version 20 needs a
# native package the registry does not serve for linux-x64):
#
#   go build -o /tmp/ctxfold . && CCUSAGE=~/.cache/h27-peers/node_modules/.bin/ccusage \
#       bench/statusline-peers.sh /tmp/ctxfold 100
set -euo pipefail
bin=$1; mb=$2
work=$(mktemp -d /tmp/statusline-bench.XXXXXX)
export XDG_CACHE_HOME=$work/cache CLAUDE_CONFIG_DIR=$work/claude NO_COLOR=1
mkdir -p "$CLAUDE_CONFIG_DIR/projects/-bench"
go build -o "$work/gen" ./bench/claudecode-gen
"$work/gen" -mb "$mb" -o "$work/s.jsonl"
sid=$(head -c 100000 "$work/s.jsonl" | grep -o '"sessionId":"[^"]*"' | head -1 | cut -d'"' -f4)
f=$CLAUDE_CONFIG_DIR/projects/-bench/$sid.jsonl
mv "$work/s.jsonl" "$f"
echo "file: $(stat -c %s "$f") bytes, session $sid, load: $(cut -d' ' -f1-3 /proc/loadavg)"
hook=$work/hook.json
printf '{"session_id":"%s","transcript_path":"%s","cwd":"/bench","workspace":{"current_dir":"/bench","project_dir":"/bench"},"model":{"id":"claude-sonnet-4-5","display_name":"Sonnet 4.5"}}' "$sid" "$f" > "$hook"
rounds=${3:-3}
run() { # name command...: wall seconds, kept per name, and the line printed
	local name=$1; shift
	/usr/bin/time -f '%e' -o "$work/t" "$@" < "$hook" > "$work/line" 2> "$work/err" || true
	tail -1 "$work/t" >> "$work/times-${name// /_}"
	printf '%-45s %6s s  %s\n' "$name" "$(tail -1 "$work/t")" "$(head -c 100 "$work/line" | tr -d '\033')"
}
all() { # case
	run "ctxfold $1" "$bin" statusline
	if [ -n "${CCUSAGE:-}" ]; then run "ccusage $1" "$CCUSAGE" statusline --offline; fi
	if [ -n "${CCLINE:-}" ]; then HOME=$work/ccline-home run "ccline $1" "$CCLINE"; fi
}
mkdir -p "$work/ccline-home"
for r in $(seq "$rounds"); do
	rm -rf "$XDG_CACHE_HOME"
	all cold
	"$work/gen" -append 1 -o "$f"
	all appended
	all unchanged
	echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
done
echo "medians of $rounds (wall s):"
for k in "$work"/times-*; do
	printf '%-30s %s\n' "${k##*/times-}" "$(sort -n "$k" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
done
rm -rf "$work"
