#!/bin/sh
# Reproduces docs/HOOKS.md's headline figure with the real Claude Code
# against the fake Anthropic provider on 127.0.0.1: a scripted session
# plants facts of every kind, runs the client's own /compact (the fake
# answers with a summary that keeps none of them), and the request after it
# is captured without and with ctxfold installed by `ctxfold setup
# claude-code`; then the recall through `ctxfold mcp`. Rewrites
# testdata/hook/claude-code/<version>/ (figures.json, hook-inputs/).
#
#   interop/claude-code/hooks.sh                     # the pinned client
#   CTXFOLD_CLAUDE_BIN=… interop/claude-code/hooks.sh   # another version
set -eu
cd "$(dirname "$0")/../.."
version=2.1.328
client=${CTXFOLD_CLAUDE_BIN:-${CTXFOLD_INTEROP_CACHE:-$HOME/.cache/ctxfold-interop}/claude-code-$version/node_modules/.bin/claude}
[ -x "$client" ] || { echo "hooks.sh: no client at $client (run interop/claude-code/record.sh once)" >&2; exit 2; }
got=$("$client" --version | cut -d' ' -f1)
out=testdata/hook/claude-code/$got
rm -rf "$out" && mkdir -p "$out"
CTXFOLD_CLAUDE_BIN=$client CTXFOLD_HOOKS_RECORD=$PWD/$out CTXFOLD_INTEROP_LIVE=1 \
	go test ./interop/claude-code -run 'TestLiveHooks$' -count=1 -v | grep -E 'planted facts|^(--- )?(PASS|FAIL)|^ok'
echo "wrote $out"
