#!/bin/sh
# Re-record the Claude Code interop fixtures from the pinned client.
# Installs @anthropic-ai/claude-code at the pinned version with npm under
# $HOME/.cache (never in the repo), then runs every scenario against the
# fake Anthropic provider on 127.0.0.1 and writes the normalised transcripts
# and requests under testdata/interop/claude-code/<version>/.
# Usage: interop/claude-code/record.sh [scenario,...]   (run from the repo root)
set -eu
version=2.1.328
prefix="${CTXFOLD_INTEROP_CACHE:-$HOME/.cache/ctxfold-interop}/claude-code-$version"
client="$prefix/node_modules/.bin/claude"
if ! "$client" --version 2>/dev/null | grep -q "^$version "; then
	mkdir -p "$prefix"
	npm install --no-audit --no-fund --prefix "$prefix" "@anthropic-ai/claude-code@$version"
fi
exec go run ./interop/claude-code/record -client "$client" \
	-out "testdata/interop/claude-code/$version" ${1:+-only "$1"}
