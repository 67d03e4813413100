#!/bin/sh
# Re-record the Claude Code interop fixtures from the pinned client.
# Installs @anthropic-ai/claude-code at the pinned version with npm under
# $HOME/.cache (never in the repo), then runs every scenario against the
# fake Anthropic provider on 127.0.0.1 and writes the normalised transcripts
# and requests under testdata/interop/claude-code/<version>/.
# Usage: interop/claude-code/record.sh [scenario,...]   (run from the repo root)
#        The scenarios `default` and `default-subagent` (the prior's
#        default-mode recordings) run only when named: scripts/record-priors.sh.
# Env:   CTXFOLD_CLAUDE_BIN=path   record with that client (a newer one)
#        instead of the pinned one; the fixtures go under its version.
set -eu
version=2.1.328 # the pinned client
if [ -n "${CTXFOLD_CLAUDE_BIN:-}" ]; then
	client=$CTXFOLD_CLAUDE_BIN
	version=$("$client" --version | cut -d' ' -f1)
else
	prefix="${CTXFOLD_INTEROP_CACHE:-$HOME/.cache/ctxfold-interop}/claude-code-$version"
	client="$prefix/node_modules/.bin/claude"
	if ! "$client" --version 2>/dev/null | grep -q "^$version "; then
		mkdir -p "$prefix"
		npm install --no-audit --no-fund --prefix "$prefix" "@anthropic-ai/claude-code@$version"
	fi
fi
exec go run ./interop/claude-code/record -client "$client" \
	-out "testdata/interop/claude-code/$version" ${1:+-only "$1"}
