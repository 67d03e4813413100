#!/bin/sh
# Reproduces docs/HOOKS.md's pi row with the real pi against the fake
# OpenAI provider on 127.0.0.1: a scripted session plants facts of every
# kind (the command and its error only in a tool call and its output), pi
# compacts on its own, and the compaction request, ctxfold's audit of pi's
# summary and the request after it are measured without and with ctxfold
# installed by `ctxfold setup pi`; then a session whose summariser drops
# the ledger, for the injection after it. Rewrites
# testdata/hook/pi/<version>/figures.json and injection.json.
#
#   interop/pi/hooks.sh                          # the pinned client
#   CTXFOLD_PI_BIN=… interop/pi/hooks.sh         # another version
set -eu
cd "$(dirname "$0")/../.."
CTXFOLD_HOOKS_RECORD=$PWD/testdata/hook CTXFOLD_INTEROP_LIVE=1 \
	go test ./interop/pi -run '^(TestLiveHooks|TestLiveHooksInjection)$' -count=1 -v -timeout 10m | grep -E 'planted facts|both sessions|^(--- )?(PASS|FAIL)|^ok'
ls testdata/hook/pi
