#!/bin/sh
# Reproduces docs/HOOKS.md's OpenCode and Kilo rows with the real clients
# against the fake OpenAI provider on 127.0.0.1: a scripted session plants
# facts of every kind (the command and its error only in a tool call and
# its output), the client compacts on its own, and the compaction request,
# ctxfold's audit of the client's summary and the request after it are
# measured without and with ctxfold installed by `ctxfold setup opencode`
# (`setup kilo`); with each also a session whose summariser drops the
# ledger, for the injection after it. Rewrites
# testdata/hook/<client>/<version>/figures.json and injection.json.
#
#   interop/opencode/hooks.sh                 # OpenCode and Kilo, pinned
#   interop/opencode/hooks.sh opencode        # one of them
#   CTXFOLD_OPENCODE_BIN=… interop/opencode/hooks.sh opencode   # another version
set -eu
cd "$(dirname "$0")/../.."
for client in ${*:-opencode kilo}; do
	case $client in
	opencode) test='TestLiveHooks|TestLiveHooksInjection' ;;
	kilo) test='TestLiveHooksKilo|TestLiveHooksKiloInjection' ;;
	*) echo "hooks.sh: opencode or kilo, not $client" >&2; exit 2 ;;
	esac
	CTXFOLD_HOOKS_RECORD=$PWD/testdata/hook CTXFOLD_INTEROP_LIVE=1 \
		go test ./interop/opencode -run "^($test)\$" -count=1 -v -timeout 15m | grep -E 'planted facts|both sessions|^(--- )?(PASS|FAIL)|^ok'
done
ls testdata/hook/opencode testdata/hook/kilo 2>/dev/null
