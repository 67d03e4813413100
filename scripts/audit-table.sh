#!/usr/bin/env bash
# scripts/audit-table.sh [--write] — the fact-survival table of
# docs/COMPACT.md §7: every shared real transcript and real-client recording
# (../shared/fixtures/external, read in place; MANIFEST.md there) is
# imported into a scratch directory, the client's own compaction (if any)
# is audited, then the session is compacted with the extractive summarizer
# at default settings and again with --keep-tokens 500 (most of these
# sessions are within the default target, so the default run is a no-op),
# and each new summary is audited; the shipped synthetic sessions
# fixtures/tools and fixtures/long follow. Prints the Markdown table; --write
# replaces it in docs/COMPACT.md between the audit-table markers.
# Needs go and jq.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
shared=${SHARED:-$repo/../shared/fixtures/external}
[ -d "$shared" ] || { echo "audit-table: $shared is absent" >&2; exit 2; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bin=$work/ctxfold
(cd "$repo" && go build -o "$bin" .)
export NO_COLOR=1 CTXFOLD_CONFIG=/dev/null HOME=$work TZ=UTC

# cell KIND JSON — "kept/total (pct%)" of one kind, "–" when it has none.
cell() {
  jq -r --arg k "$1" '.kinds[] | select(.kind==$k) | if .total==0 then "–" else "\(.kept)/\(.total) (\(.survival_pct)%)" end' <<<"$2"
}

# row NAME RUN FILTER JSON [SIZE] — one table row per audited summary;
# SIZE is the new summary's tokens against its cap.
row() {
  local name=$1 run=$2 size=${5:-} s
  while IFS= read -r s; do
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s/%s (%s%%) | %s |\n' "$name" "$run" \
      "$(jq -r .source <<<"$s")" "$(cell change "$s")" \
      "$(cell path "$s")" "$(cell command "$s")" "$(cell error "$s")" "$(cell instruction "$s")" "$(cell request "$s")" \
      "$(cell identifier "$s")" "$(cell url "$s")" "$(cell number "$s")" \
      "$(jq -r .kept <<<"$s")" "$(jq -r .total <<<"$s")" "$(jq -r .survival_pct <<<"$s")" "$size"
  done < <(jq -c "$3" <<<"$4")
}

table() {
  echo '| transcript | run | summary by | changes | paths | commands | errors | instructions | requests | identifiers | URLs | numbers | all facts | summary tokens / cap |'
  echo '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|'
  local f name dir win out
  while IFS= read -r f; do
    name=${f#"$shared"/}
    name=${name#"$repo"/}
    dir=$work/s/$(echo "$name" | tr '/' '_')
    if [ -d "$f" ]; then
      cp -r "$f" "$dir"  # a shipped session (synthetic), not an import
    else
      "$bin" import "$f" -o "$dir" >/dev/null 2>&1 || { echo "| $name | import failed | | | | | | | | | | | |"; continue; }
    fi
    # A model this build does not know (or none recorded) gets a 200k window.
    win=()
    "$bin" estimate "$dir" >/dev/null 2>&1 || win=(--window 200000)
    if out=$("$bin" audit "$dir" --all --json 2>/dev/null); then
      row "$name" "as imported" '.summaries[]' "$out"
    fi
    for run in defaults keepsmall; do
      local d=$dir.$run
      cp -r "$dir" "$d"
      local flags=("${win[@]}")
      [ "$run" = keepsmall ] && flags+=(--keep-tokens 500)
      out=$("$bin" compact "$d" "${flags[@]}" --json 2>/dev/null) || { echo "| $name | $run | compact failed | | | | | | | | | | |"; continue; }
      if [ "$(jq -r .outcome <<<"$out")" != succeeded ]; then
        echo "| $name | ${run/keepsmall/--keep-tokens 500} | no-op: $(jq -r .reason <<<"$out") | | | | | | | | | | |"
        continue
      fi
      row "$name" "${run/keepsmall/--keep-tokens 500}" '.summaries[]' "$("$bin" audit "$d" --json)" \
        "$(jq -r '"\(.summary_tokens) / \(.summary_cap_tokens)" + (if .summary_growth_tokens > 0 then " (+\(.summary_growth_tokens))" else "" end)' <<<"$out")"
    done
  done < <(find "$shared" -type f \( -name '*.jsonl' -o -name '*.json' \) ! -path '*/subagents/*' | LC_ALL=C sort
    # The real-client recordings (docs/INTEROP.md): each scenario's main
    # transcript (sub-agent files are read beside it).
    find "$repo/testdata/interop" -type f \( -path '*/transcript/*.jsonl' -o -name 'rollout-*.jsonl' -o -path '*/chats/session-*.jsonl' \) \
      ! -path '*/subagents/*' ! -path '*/chats/*/*/*' | LC_ALL=C sort
    # The shipped synthetic sessions, for the kinds the real ones lack
    # (the user's instructions).
    echo "$repo/fixtures/tools"; echo "$repo/fixtures/long")
}

t=$(table)
if [ "${1:-}" = --write ]; then
  doc=$repo/docs/COMPACT.md
  awk -v t="$t" '
    /<!-- audit-table:start -->/ { print; print t; skip=1; next }
    /<!-- audit-table:end -->/ { skip=0 }
    !skip' "$doc" > "$doc.tmp" && mv "$doc.tmp" "$doc"
else
  echo "$t"
fi
