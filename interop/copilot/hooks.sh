#!/bin/sh
# Reproduces docs/HOOKS.md's GitHub Copilot CLI figures with the real
# client against the fake OpenAI provider on 127.0.0.1: a scripted session
# plants facts of every kind (the failing command's error only in a tool's
# output), the client's own /compact runs with a summary that keeps none of
# them, and the request after it is captured without and with ctxfold
# installed by `ctxfold setup copilot`; then the recall through `ctxfold
# mcp` (ctxfold-search_history, ctxfold-read_turns). Rewrites
# testdata/hook/copilot/<version>/ (figures.json, hook-inputs/).
#
#   interop/copilot/hooks.sh                        # the pinned client
#   CTXFOLD_COPILOT_BIN=… interop/copilot/hooks.sh  # another version
set -eu
cd "$(dirname "$0")/../.."
version=1.0.102
cache=${CTXFOLD_INTEROP_CACHE:-$HOME/.cache/ctxfold-interop}
client=${CTXFOLD_COPILOT_BIN:-$cache/copilot-$version/node_modules/.bin/copilot}
[ -x "$client" ] || { echo "hooks.sh: no client at $client (run interop/copilot/record.sh once)" >&2; exit 2; }
got=$(COPILOT_PKG_CACHE_HOME=$cache/copilot-pkg "$client" --version </dev/null | sed -n 's/^GitHub Copilot CLI \([0-9.]*[0-9]\)\.$/\1/p')
[ -n "$got" ] || { echo "hooks.sh: $client --version names no version" >&2; exit 1; }
out=testdata/hook/copilot/$got
rm -rf "$out" && mkdir -p "$out"
CTXFOLD_COPILOT_BIN=$client CTXFOLD_HOOKS_RECORD=$PWD/$out CTXFOLD_INTEROP_LIVE=1 \
	go test ./interop/copilot -run 'TestLiveHooks$' -count=1 -v | grep -E 'planted facts|recall:|lost|read_turns|^(--- )?(PASS|FAIL)|^ok|\.go:[0-9]+:'
echo "wrote $out"
