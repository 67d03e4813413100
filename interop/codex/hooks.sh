#!/bin/sh
# Reproduces docs/HOOKS.md's Codex figures with the real Codex CLI against
# the fake OpenAI provider on 127.0.0.1: a scripted session plants facts of
# every kind, Codex compacts on its own (model_auto_compact_token_limit,
# the fake reporting an inflated usage), and the request after it is
# captured without and with ctxfold installed by `ctxfold setup codex`;
# then the recall through `ctxfold mcp` (Codex's tool_search, search_history,
# read_turns). Rewrites testdata/hook/codex/<version>/ (figures.json,
# hook-inputs/).
#
#   interop/codex/hooks.sh                      # the pinned client
#   CTXFOLD_CODEX_BIN=… interop/codex/hooks.sh  # another version
set -eu
cd "$(dirname "$0")/../.."
version=0.169.0
client=${CTXFOLD_CODEX_BIN:-${CTXFOLD_INTEROP_CACHE:-$HOME/.cache/ctxfold-interop}/codex-$version/node_modules/.bin/codex}
[ -x "$client" ] || { echo "hooks.sh: no client at $client (run interop/codex/record.sh once)" >&2; exit 2; }
got=$("$client" --version | sed 's/^codex-cli //')
out=testdata/hook/codex/$got
rm -rf "$out" && mkdir -p "$out"
CTXFOLD_CODEX_BIN=$client CTXFOLD_HOOKS_RECORD=$PWD/$out CTXFOLD_INTEROP_LIVE=1 \
	go test ./interop/codex -run 'TestLiveHooks$' -count=1 -v | grep -E 'planted facts|recall:|^(--- )?(PASS|FAIL)|^ok'
echo "wrote $out"
