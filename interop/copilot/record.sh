#!/usr/bin/env bash
# Re-records the GitHub Copilot CLI interop fixtures (docs/INTEROP-copilot.md):
# installs the pinned client under the interop cache (never in the repo),
# runs each scenario against the fake OpenAI provider on 127.0.0.1 with a
# throw-away HOME (COPILOT_OFFLINE, a BYOK provider from the environment),
# and writes the normalised events.jsonl and the captured requests to
# testdata/interop/copilot/$VERSION/<scenario>/ (or to $OUT).
#
# Usage: interop/copilot/record.sh [scenario...]   (default: all)
# Env:   OUT=dir   write there instead of testdata (the live test does this)
#        KEEP=1    keep the temporary directory for inspection
#        CTXFOLD_COPILOT_BIN=path   record with that client (a newer one)
#                  instead of the pinned one; the fixtures go under its version
set -euo pipefail

VERSION=1.0.102 # the pinned client
REPO=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${CTXFOLD_INTEROP_CACHE:-$HOME/.cache/ctxfold-interop}/copilot-$VERSION
if [ -n "${CTXFOLD_COPILOT_BIN:-}" ]; then
	COPILOT=$CTXFOLD_COPILOT_BIN
	VERSION=$(COPILOT_PKG_CACHE_HOME=${CTXFOLD_INTEROP_CACHE:-$HOME/.cache/ctxfold-interop}/copilot-pkg "$COPILOT" --version </dev/null 2>/dev/null |
		sed -n 's/^GitHub Copilot CLI \([0-9.]*[0-9]\)\.$/\1/p')
	[ -n "$VERSION" ] || { echo "record.sh: $COPILOT --version names no version" >&2; exit 1; }
else
	COPILOT=$CACHE/node_modules/.bin/copilot
	if [ ! -x "$COPILOT" ]; then
		mkdir -p "$CACHE"
		npm install --no-audit --no-fund --prefix "$CACHE" "@github/copilot@$VERSION" >&2
	fi
fi
# The native package unpacks itself (~240 MB) on first run: once, here.
PKG=${CTXFOLD_INTEROP_CACHE:-$HOME/.cache/ctxfold-interop}/copilot-pkg
OUT=${OUT:-$REPO/testdata/interop/copilot/$VERSION}
ALL="chat tool compact recompact auto-compact anthropic responses subagent"
SCENARIOS=${*:-$ALL}

TMP=$(mktemp -d /tmp/ctxfold-copilot-XXXXXX)
FAKEPID=
cleanup() {
	[ -n "$FAKEPID" ] && kill "$FAKEPID" 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
(cd "$REPO" && go build -o "$TMP/fakeopenai" ./internal/fake/openai/cmd/fakeopenai &&
	go build -o "$TMP/fakeanthropic" ./internal/fake/anthropic/cmd/fakeanthropic && go build -o "$TMP/normalize" ./interop/copilot/normalize)

# copilot runs one client command of the current scenario, bounded in time.
copilot() {
	(cd "$S/work" && HOME="$S/home" COPILOT_PKG_CACHE_HOME="$PKG" NO_COLOR=1 \
		COPILOT_OFFLINE=true COPILOT_PROVIDER_BASE_URL="$(cat "$S/url")" COPILOT_PROVIDER_API_KEY=dummy \
		COPILOT_PROVIDER_TYPE=$TYPE COPILOT_MODEL=$MODEL \
		env ${WIRE:+COPILOT_PROVIDER_WIRE_API=$WIRE} ${LIMIT:+COPILOT_PROVIDER_MAX_PROMPT_TOKENS=$LIMIT} timeout 120 "$COPILOT" "$@" --allow-all-tools </dev/null >>"$S/client.log" 2>&1) ||
		{ echo "record.sh: copilot $* failed; see $S/client.log" >&2; tail -20 "$S/client.log" >&2; exit 1; }
}

# session is the id of the scenario's one session.
session() { basename "$(dirname "$(ls "$S"/home/.copilot/session-state/*/events.jsonl | head -1)")"; }

for scenario in $SCENARIOS; do
	S=$TMP/$scenario
	mkdir -p "$S/home" "$S/work" "$S/requests"
	# The Anthropic scenario runs against the fake Anthropic provider, the
	# others against the fake OpenAI one (Chat Completions).
	TYPE=openai MODEL=gpt-4.1 WIRE=completions
	[ "$scenario" = responses ] && MODEL=gpt-5.4 WIRE=responses
	if [ "$scenario" = anthropic ]; then
		TYPE=anthropic MODEL=claude-sonnet-4.5 WIRE=
		"$TMP/fakeanthropic" -record "$S/requests" -url-file "$S/url" -max-lifetime 5m 2>"$S/fake.log" &
	else
		"$TMP/fakeopenai" -record "$S/requests" -url-file "$S/url" -timeout 5m 2>"$S/fake.log" &
	fi
	FAKEPID=$!
	for _ in $(seq 100); do [ -s "$S/url" ] && break; sleep 0.1; done
	[ -s "$S/url" ] || { echo "record.sh: the fake provider did not start" >&2; exit 1; }
	LIMIT=
	case $scenario in
	chat)
		copilot -p "Hello. Reply briefly."
		copilot -p "A second turn, after resuming." --resume="$(session)"
		;;
	tool)
		copilot -p "Run a command for me. [[shell: echo hello from the tool]]"
		;;
	compact)
		copilot -p "First turn. [[shell: echo before compaction]]"
		copilot -p "A second turn before compacting." --resume="$(session)"
		copilot -p "/compact" --resume="$(session)"
		copilot -p "A turn after the compaction." --resume="$(session)"
		;;
	auto-compact)
		# A prompt limit a little above what the first request holds (its
		# tools and system prompt alone are ~10.5k of the client's tokens):
		# the client compacts in the background once the history, grown by
		# the commands' output, crosses its threshold.
		LIMIT=${AUTO_LIMIT:-14000}
		copilot -p "First turn. [[shell: seq 1 300]]"
		copilot -p "Second turn. [[shell: seq 301 600]]" --resume="$(session)"
		copilot -p "Third turn." --resume="$(session)"
		;;
	recompact)
		copilot -p "First turn."
		copilot -p "/compact" --resume="$(session)"
		copilot -p "Second turn." --resume="$(session)"
		copilot -p "/compact" --resume="$(session)"
		copilot -p "Third turn." --resume="$(session)"
		;;
	subagent)
		copilot -p "Delegate this. [[spawn: Say hi from the helper.]]"
		;;
	responses)
		copilot -p "Run a command for me. [[shell: echo hello from the tool]]"
		copilot -p "A second turn, after resuming." --resume="$(session)"
		;;
	anthropic)
		copilot -p "Run a command for me. [[bash: echo hello from the tool]]"
		copilot -p "/compact" --resume="$(session)"
		copilot -p "A turn after the compaction." --resume="$(session)"
		;;
	*)
		echo "record.sh: unknown scenario $scenario" >&2
		exit 2
		;;
	esac
	kill "$FAKEPID"
	wait "$FAKEPID" 2>/dev/null || true
	FAKEPID=
	rm -rf "${OUT:?}/$scenario"
	"$TMP/normalize" -root "$S" -out "$OUT/$scenario" -blobs "$OUT/blobs"
done
