#!/bin/sh
# Reproduces docs/HOOKS.md's Factory Droid figures with the real Droid
# against the fake OpenAI provider on 127.0.0.1: a scripted session plants
# the ten facts, pushes them out of the tail Droid keeps verbatim, and
# Droid compacts by itself (the fake answers with a summary that keeps
# none of them); the request after the first tool call that follows is
# captured without and with ctxfold installed by `ctxfold setup droid`;
# then the recall through `ctxfold mcp`. Rewrites
# testdata/hook/droid/<version>/ (figures.json, figures-prompt.json,
# figures-manual.json: after the manual compaction, hook-inputs/).
#
#   interop/droid/hooks.sh                    # the pinned client
#   CTXFOLD_DROID_BIN=… interop/droid/hooks.sh   # another version
set -eu
cd "$(dirname "$0")/../.."
version=0.215.0
client=${CTXFOLD_DROID_BIN:-${CTXFOLD_INTEROP_CACHE:-$HOME/.cache/ctxfold-interop}/droid-$version/node_modules/.bin/droid}
[ -x "$client" ] || { echo "hooks.sh: no client at $client (run interop/droid/record.sh once)" >&2; exit 2; }
got=$("$client" --version | tail -1)
out=testdata/hook/droid/$got
rm -rf "$out" && mkdir -p "$out"
CTXFOLD_DROID_BIN=$client CTXFOLD_HOOKS_RECORD=$PWD/$out CTXFOLD_INTEROP_LIVE=1 \
	go test ./interop/droid -run 'TestLiveHooks(Prompt|Manual)?$' -count=1 -v | grep -E 'planted facts|^(--- )?(PASS|FAIL)|^ok'
echo "wrote $out"
