#!/bin/sh
# Reproduces docs/HOOKS.md's Gemini CLI figures with the real client
# against the fake Gemini API on 127.0.0.1: a scripted session plants facts
# of every kind, Gemini CLI compresses on its own (the fake reports an
# inflated prompt count), and the request after it is captured without and
# with ctxfold installed by `ctxfold setup gemini`; then the recall through
# `ctxfold mcp` (mcp_ctxfold_search_history, mcp_ctxfold_read_turns).
# Rewrites testdata/hook/gemini-cli/<version>/ (figures.json, hook-inputs/).
#
#   interop/gemini-cli/hooks.sh                       # the pinned client
#   CTXFOLD_GEMINI_BIN=… interop/gemini-cli/hooks.sh  # another version
set -eu
cd "$(dirname "$0")/../.."
version=0.61.0
client=${CTXFOLD_GEMINI_BIN:-${CTXFOLD_INTEROP_CACHE:-$HOME/.cache/ctxfold-interop}/gemini-cli-$version/node_modules/.bin/gemini}
[ -x "$client" ] || { echo "hooks.sh: no client at $client (run interop/gemini-cli/record.sh once)" >&2; exit 2; }
got=$("$client" --version)
out=testdata/hook/gemini-cli/$got
rm -rf "$out" && mkdir -p "$out"
CTXFOLD_GEMINI_BIN=$client CTXFOLD_HOOKS_RECORD=$PWD/$out CTXFOLD_INTEROP_LIVE=1 \
	go test ./interop/gemini-cli -run 'TestLiveHooks$' -count=1 -v | grep -E 'planted facts|recall:|lost|^(--- )?(PASS|FAIL)|^ok'
echo "wrote $out"
