#!/usr/bin/env bash
# scripts/record-priors.sh — records the first request of each client
# version in its DEFAULT mode (docs/ACCURACY.md, "The prior"): the client
# as a new user runs it — its default tools and model, no CLAUDE.md or
# AGENTS.md, no MCP server, no hook — against the fake providers on
# 127.0.0.1, exactly as the interop recordings run it
# (interop/claude-code/record.sh, interop/codex/record.sh; scenario
# `default`). Only the first request body with tools (the first at all when
# none carries tools) is kept, normalised as the recordings are, under
# testdata/priors/<client>/<version>/default/requests/; then run
# scripts/prior-table.sh. The clients are installed with npm under
# ${CTXFOLD_INTEROP_CACHE:-$HOME/.cache/ctxfold-interop}/<client>-<version>.
#
# Usage: scripts/record-priors.sh [client@version ...]   (default: all below)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${CTXFOLD_INTEROP_CACHE:-$HOME/.cache/ctxfold-interop}
# The versions the shared real transcripts were written by, and the pinned
# current ones.
ALL="claude-code@1.0.98 claude-code@1.0.108 claude-code@2.1.39 claude-code@2.1.328 claude-code@2.1.332
codex@0.58.0 codex@0.135.0 codex@0.169.0"
tmp=$(mktemp -d /tmp/ctxfold-priors-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$repo"
go build -o "$tmp/ccrecord" ./interop/claude-code/record

# install CLIENT VERSION PACKAGE BIN: the client's binary, installed once.
install() {
	local dir=$cache/$1-$2
	if [ ! -x "$dir/node_modules/.bin/$4" ]; then
		mkdir -p "$dir"
		npm install --no-audit --no-fund --prefix "$dir" "$3@$2" >&2
	fi
	echo "$dir/node_modules/.bin/$4"
}

# keep SRC DST: the first request body of SRC with tools (else the first).
keep() {
	local pick=
	for f in "$1"/*.json; do
		case $f in *count_tokens*) continue ;; esac
		[ -n "$pick" ] || pick=$f
		if tr -d ' \n\t' <"$f" | grep -q '"tools":\[{'; then
			pick=$f
			break
		fi
	done
	[ -n "$pick" ] || { echo "record-priors.sh: no request under $1" >&2; exit 1; }
	rm -rf "$2"
	mkdir -p "$2/requests"
	cp "$pick" "$2/requests/"
}

for cv in ${*:-$ALL}; do
	client=${cv%@*} version=${cv#*@}
	case $client in
	claude-code)
		bin=$(install claude-code "$version" @anthropic-ai/claude-code claude)
		"$tmp/ccrecord" -client "$bin" -out "$tmp/$cv" -only default
		;;
	codex)
		bin=$(install codex "$version" @openai/codex codex)
		CTXFOLD_CODEX_BIN=$bin OUT=$tmp/$cv bash interop/codex/record.sh default
		;;
	*)
		echo "record-priors.sh: no default scenario for $client" >&2
		exit 2
		;;
	esac
	keep "$tmp/$cv/default/requests" "testdata/priors/$client/$version/default"
	echo "recorded $client $version default" >&2
done
