#!/usr/bin/env bash
# scripts/record-priors.sh — records the first request of each client
# version in its DEFAULT mode (docs/ACCURACY.md, "The prior"): the client
# as a new user runs it — its default tools and model, no CLAUDE.md or
# AGENTS.md, no MCP server, no hook — against the fake providers on
# 127.0.0.1, exactly as the interop recordings run it
# (interop/claude-code/record.sh, interop/codex/record.sh; scenario
# `default`). Only the first request body with tools (the first at all when
# none carries tools) is kept, normalised as the recordings are, under
# testdata/priors/<client>/<version>/default/requests/, and for Claude Code
# a sub-agent's first request (scenario `default-subagent`) under
# .../subagent/requests/; then run
# scripts/prior-table.sh. The clients are installed with npm under
# ${CTXFOLD_INTEROP_CACHE:-$HOME/.cache/ctxfold-interop}/<client>-<version>.
#
# Usage: scripts/record-priors.sh [client@version ...]   (default: all below)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${CTXFOLD_INTEROP_CACHE:-$HOME/.cache/ctxfold-interop}
# The versions the shared real transcripts were written by, the pinned
# current ones, and Claude Code 2.1.222 and Codex 0.104.0 (the held-out
# sessions' versions, docs/ACCURACY.md "A second held-out set").
ALL="claude-code@1.0.98 claude-code@1.0.108 claude-code@2.1.39 claude-code@2.1.222 claude-code@2.1.328 claude-code@2.1.332
codex@0.58.0 codex@0.104.0 codex@0.135.0 codex@0.169.0"
tmp=$(mktemp -d /tmp/ctxfold-priors-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$repo"
go build -o "$tmp/ccrecord" ./interop/claude-code/record

# install CLIENT VERSION PACKAGE BIN: the client's binary, installed once.
install() {
	local dir=$cache/$1-$2
	if [ ! -x "$dir/node_modules/.bin/$4" ]; then
		mkdir -p "$dir"
		npm install --no-audit --no-fund --prefix "$dir" "$3@$2" >&2
	fi
	echo "$dir/node_modules/.bin/$4"
}

# keep SRC DST [subagent]: the first request body of SRC with tools (the
# first at all when none carries tools) or, with subagent, the first whose
# system prompt differs from the first's (a sub-agent's, which may come
# after the main agent's next request: the client runs it in the
# background).
keep() {
	local pick
	pick=$(python3 - "$1" "${3:-}" <<'PY'
import json, os, sys
src, sub = sys.argv[1], sys.argv[2]
reqs = []
for name in sorted(os.listdir(src)):
    if name.endswith(".json") and "count_tokens" not in name:
        with open(os.path.join(src, name)) as f:
            body = json.load(f)
        reqs.append((name, body.get("body", body)))
with_tools = [r for r in reqs if r[1].get("tools")]
if not sub:
    print((with_tools or reqs)[0][0])
else:
    first = json.dumps(with_tools[0][1].get("system"))
    print(next(n for n, b in with_tools if json.dumps(b.get("system")) != first))
PY
	) || { echo "record-priors.sh: no request to keep under $1" >&2; exit 1; }
	rm -rf "$2"
	mkdir -p "$2/requests"
	# A fixed name: which request a background sub-agent's is, is racy.
	cp "$1/$pick" "$2/requests/${3:+subagent-}$(basename "$pick" | sed 's/^[0-9]*-//')"
}

for cv in ${*:-$ALL}; do
	client=${cv%@*} version=${cv#*@}
	case $client in
	claude-code)
		bin=$(install claude-code "$version" @anthropic-ai/claude-code claude)
		"$tmp/ccrecord" -client "$bin" -out "$tmp/$cv" -only default,default-subagent
		keep "$tmp/$cv/default-subagent/requests" "testdata/priors/$client/$version/subagent" subagent
		;;
	codex)
		bin=$(install codex "$version" @openai/codex codex)
		CTXFOLD_CODEX_BIN=$bin OUT=$tmp/$cv bash interop/codex/record.sh default
		;;
	*)
		echo "record-priors.sh: no default scenario for $client" >&2
		exit 2
		;;
	esac
	keep "$tmp/$cv/default/requests" "testdata/priors/$client/$version/default"
	echo "recorded $client $version default" >&2
done
