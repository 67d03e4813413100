#!/bin/sh
# Reproduces docs/HOOKS.md's Qwen Code figures with the real client against
# the fake OpenAI provider on 127.0.0.1: a scripted session plants facts of
# every kind (two only in a tool's output), Qwen Code's own /compress folds
# them into a <state_snapshot> that keeps none, and the request after it is
# captured without and with ctxfold installed by `ctxfold setup qwen`; then
# the recall through `ctxfold mcp` (mcp__ctxfold__search_history,
# mcp__ctxfold__read_turns). Rewrites testdata/hook/qwen-code/<version>/
# (figures.json, hook-inputs/).
#
#   interop/qwen-code/hooks.sh                     # the pinned client
#   CTXFOLD_QWEN_BIN=… interop/qwen-code/hooks.sh  # another version
set -eu
cd "$(dirname "$0")/../.."
version=0.24.4
node_dir=${CTXFOLD_NODE22_DIR:-$HOME/.cache/ctxfold-node22}
PATH=$node_dir/node_modules/node/bin:$PATH
export PATH
client=${CTXFOLD_QWEN_BIN:-${CTXFOLD_INTEROP_CACHE:-$HOME/.cache/ctxfold-interop}/qwen-code-$version/node_modules/.bin/qwen}
[ -x "$client" ] || { echo "hooks.sh: no client at $client (run interop/qwen-code/record.sh once)" >&2; exit 2; }
got=$("$client" --version)
out=testdata/hook/qwen-code/$got
rm -rf "$out" && mkdir -p "$out"
CTXFOLD_QWEN_BIN=$client CTXFOLD_HOOKS_RECORD=$PWD/$out CTXFOLD_INTEROP_LIVE=1 \
	go test ./interop/qwen-code -run 'TestLiveHooks$' -count=1 -v | grep -E 'planted facts|recall:|lost|read_turns result|^(--- )?(PASS|FAIL)|^ok|\.go:[0-9]+:'
echo "wrote $out"
