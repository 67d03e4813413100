#!/usr/bin/env bash
# scripts/record-outputs.sh BIN OUT — runs every command of binary BIN, text
# and --json, on every shipped fixture, every shared real transcript
# (imported in place from ../shared/fixtures/external) and a generated
# 100k-node session, writing stdout, stderr and the exit status of each run
# under OUT. Two recordings are compared with `diff -r`; this is how a
# behaviour-preserving refactor proves its outputs are byte-identical:
#
#   git worktree add /tmp/base <rev> && (cd /tmp/base && go build -o /tmp/ctxfold-base .)
#   go build -o /tmp/ctxfold-head .
#   scripts/record-outputs.sh /tmp/ctxfold-base /tmp/out-base
#   scripts/record-outputs.sh /tmp/ctxfold-head /tmp/out-head
#   diff -r /tmp/out-base /tmp/out-head
#
# Set RECORD_LARGE=0 to skip the 100k-node session. Paths in the outputs are
# the work copies under $WORK (default /tmp/record-work), so both runs see
# the same paths.
set -uo pipefail
bin=$(realpath "$1"); out=$2
repo=$(cd "$(dirname "$0")/.." && pwd)
shared=${SHARED:-$repo/../shared/fixtures/external}
work=${WORK:-/tmp/record-work}
rm -rf "$out" "$work"; mkdir -p "$out" "$work"
export NO_COLOR=1 CTXFOLD_CONFIG=/dev/null HOME=$work/home TZ=UTC
mkdir -p "$HOME"

# run NAME CMD... — one recorded invocation.
run() {
  local name=$1; shift
  local f="$out/$name"
  mkdir -p "$(dirname "$f")"
  (cd "$work" && "$@" >"$f.out" 2>"$f.err" </dev/null)
  echo $? >"$f.rc"
}

# session NAME DIR — every read-only command on a copy of DIR, then a real
# compaction on a second copy and the commands again.
session() {
  local name=$1 src=$2 d="$work/s/$1"
  rm -rf "$d"; mkdir -p "$(dirname "$d")"; cp -r "$src" "$d"
  find "$d" \( -name 'estimate.cache*' -o -name cache -o -name lock \) -prune -exec rm -rf {} +
  local m=()
  [ -n "${MODEL:-}" ] && m=(--model "$MODEL")
  for j in "" --json; do
    local s=${j:+.json}
    run "$name/estimate$s" "$bin" estimate "$d" "${m[@]}" $j
    run "$name/estimate-nodes$s" "$bin" estimate "$d" "${m[@]}" --nodes $j
    run "$name/verify$s" "$bin" verify "$d" $j
    run "$name/verify-strict$s" "$bin" verify "$d" --strict $j
    run "$name/search$s" "$bin" search "$d" the $j
    run "$name/search-re$s" "$bin" search "$d" --regexp 'err(or)?' $j
    run "$name/compact-dry$s" "$bin" compact "$d" "${m[@]}" --dry-run --keep-tokens 200 $j
    run "$name/checkout$s" "$bin" checkout "$d" $j
    run "$name/render-text$s" "$bin" render "$d" $j
    run "$name/graph-json$s" "$bin" graph "$d" "${m[@]}" --format json $j
  done
  for f in text ids jsonl openai anthropic; do
    run "$name/render-$f" "$bin" render "$d" --format "$f"
    run "$name/render-raw-$f" "$bin" render "$d" --raw --format "$f"
  done
  for f in tree dot mermaid html; do
    run "$name/graph-$f" "$bin" graph "$d" "${m[@]}" --format "$f"
  done
  run "$name/graph-expand" "$bin" graph "$d" "${m[@]}" --expand
  run "$name/fit-openai" "$bin" render "$d" --fit --model gpt-4o --window 2000 --format openai
  run "$name/fit-openai.json" "$bin" render "$d" --fit --model gpt-4o --window 2000 --format openai --json
  run "$name/fit-anthropic" "$bin" render "$d" --fit --model gpt-4o --window 2000 --format anthropic
  local c="$work/s/$name.compacted"
  rm -rf "$c"; cp -r "$d" "$c"
  run "$name/compact" "$bin" compact "$c" "${m[@]}" --keep-tokens 200
  run "$name/compact-again.json" "$bin" compact "$c" "${m[@]}" --keep-tokens 200 --json
  run "$name/after-render-jsonl" "$bin" render "$c" --format jsonl
  run "$name/after-estimate.json" "$bin" estimate "$c" "${m[@]}" --json
  run "$name/after-verify.json" "$bin" verify "$c" --json
  run "$name/after-graph" "$bin" graph "$c" "${m[@]}"
  cp "$c/nodes.jsonl" "$out/$name/after-nodes.jsonl" 2>/dev/null
  # Ids and timestamps of a fresh summary differ run to run only through
  # the clock; events.jsonl is kept without its time fields.
  sed -E 's/"(time|at|started_at|finished_at)":"[^"]*"/"\1":"-"/g' "$c/events.jsonl" >"$out/$name/after-events.jsonl" 2>/dev/null
}

for d in "$repo"/fixtures/*/ "$repo"/fixtures/broken/*/ "$repo"/fixtures/bad/*/ "$repo"/fixtures/hostile/*/; do
  [ -f "$d/session.json" ] || [ -f "$d/nodes.jsonl" ] || continue
  rel=${d#"$repo"/fixtures/}; rel=${rel%/}
  session "fixtures/$rel" "$d"
done

# importfile NAME FILE — import FILE (text and --json reports), then every
# session command on each session the import made.
importfile() {
  local rel=$1 f=$2 j s sub
  for j in "" --json; do
    run "$rel/import${j:+.json}" "$bin" import "$f" -o "$work/imp/$rel$j" $j
  done
  # Sessions a multi-conversation file made are directories below -o.
  while IFS= read -r sj; do
    s=$(dirname "$sj"); sub=${s#"$work/imp/$rel"}
    session "$rel${sub:+/imported$sub}" "$s"
  done < <(find "$work/imp/$rel" -name session.json 2>/dev/null | sort)
}

while IFS= read -r f; do
  importfile "fixtures/import/${f#"$repo"/fixtures/import/}" "$f"
done < <(find "$repo/fixtures/import" -type f | sort)

if [ -d "$shared" ]; then
  while IFS= read -r f; do
    importfile "external/${f#"$shared"/}" "$f"
  done < <(find "$shared" -type f \( -name '*.jsonl' -o -name '*.json' \) -not -path '*/subagents/*' | sort)
fi

run config "$bin" config
run config.json "$bin" config --json
run version-help "$bin" --help

if [ "${RECORD_LARGE:-1}" != 0 ]; then
  (cd "$repo" && go run ./bench/estimate-gen -n 100000 -o "$work/gen100k" >/dev/null)
  MODEL=gpt-4o session gen100k "$work/gen100k"
fi
# What differs run to run by design: minted summary ids, durations and
# today's timestamps.
today=$(date -u +%Y-%m-%d)
find "$out" -type f -print0 | xargs -0 sed -i -E \
  -e 's/summary_[0-9a-f]{16}/summary_MINTED/g' \
  -e 's/"duration_ms": ?[0-9]+/"duration_ms":0/g' \
  -e "s/${today}T[0-9:.]+Z?/TODAY/g" \
  -e "s/${today//-/}T[0-9.]+Z/TODAY/g"
echo "recorded $(find "$out" -name '*.rc' | wc -l) runs under $out"
