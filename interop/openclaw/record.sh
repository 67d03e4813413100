#!/usr/bin/env bash
# Re-records the OpenClaw interop fixtures (docs/INTEROP-openclaw.md):
# installs Node 24 and the pinned client under $HOME/.cache (never in the
# repo), runs each scenario against the fake OpenAI provider on 127.0.0.1
# with a throw-away HOME, and writes the session's transcript_events rows
# and the captured requests (slimmed by interop/openclaw/dump) to
# testdata/interop/openclaw/$VERSION/<scenario>/ (or to $OUT).
#
# Usage: interop/openclaw/record.sh [scenario...]   (default: all)
# Env:   OUT=dir   write there instead of testdata (the live test does this)
#        KEEP=1    keep the temporary directory for inspection
#        CTXFOLD_OPENCLAW_BIN=path   record with that client instead of the
#                  pinned one; the fixtures go under its version
set -euo pipefail

VERSION=2026.9.6 # the pinned client
REPO=$(cd "$(dirname "$0")/../.." && pwd)
NODE24=${CTXFOLD_NODE24:-$HOME/.cache/ctxfold-node24}
if [ ! -x "$NODE24/node_modules/node/bin/node" ]; then
	npm install --no-audit --no-fund --prefix "$NODE24" node@24 >&2
fi
export PATH="$NODE24/node_modules/node/bin:$PATH"
if [ -n "${CTXFOLD_OPENCLAW_BIN:-}" ]; then
	OC=$CTXFOLD_OPENCLAW_BIN
	VERSION=$("$OC" --version 2>&1 | grep -oE '[0-9]{4}\.[0-9]+\.[0-9]+' | head -1)
else
	CACHE=${CTXFOLD_INTEROP_CACHE:-$HOME/.cache/ctxfold-interop}/openclaw-$VERSION
	OC=$CACHE/node_modules/.bin/openclaw
	if [ ! -x "$OC" ]; then
		mkdir -p "$CACHE"
		npm install --no-audit --no-fund --prefix "$CACHE" "openclaw@$VERSION" >&2
	fi
fi
OUT=${OUT:-$REPO/testdata/interop/openclaw/$VERSION}
ALL="compaction"
SCENARIOS=${*:-$ALL}

TMP=$(mktemp -d /tmp/ctxfold-openclaw-XXXXXX)
FAKEPID=
cleanup() {
	[ -n "$FAKEPID" ] && kill "$FAKEPID" 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
(cd "$REPO" && go build -o "$TMP/fakeopenai" ./internal/fake/openai/cmd/fakeopenai && go build -o "$TMP/dump" ./interop/openclaw/dump)

# openclaw runs one message of the current scenario's session, bounded in
# time (OpenClaw takes about a minute and a half a turn on a loaded machine).
openclaw() {
	(cd "$S/work" && HOME="$S/home" NO_COLOR=1 \
		timeout 400 "$OC" agent --local --session-id "$scenario" --message "$1" </dev/null >>"$S/client.log" 2>&1) ||
		{ echo "record.sh: openclaw $1 failed; see $S/client.log" >&2; tail -20 "$S/client.log" >&2; exit 1; }
}

for scenario in $SCENARIOS; do
	S=$TMP/$scenario
	mkdir -p "$S/home/.openclaw" "$S/work" "$S/requests"
	"$TMP/fakeopenai" -record "$S/requests" -url-file "$S/url" -timeout 30m 2>"$S/fake.log" &
	FAKEPID=$!
	for _ in $(seq 100); do [ -s "$S/url" ] && break; sleep 0.1; done
	[ -s "$S/url" ] || { echo "record.sh: the fake provider did not start" >&2; exit 1; }
	# compaction.mode "default": the safeguard mode audits the summary's
	# headings, which the fake's one-line summary has not.
	cat >"$S/home/.openclaw/openclaw.json" <<JSON
{"agents": {"defaults": {"model": {"primary": "fake/gpt-5.4"}, "workspace": "$S/work",
   "compaction": {"mode": "default", "keepRecentTokens": 20}}},
 "models": {"mode": "merge", "providers": {"fake": {"baseUrl": "$(cat "$S/url")", "apiKey": "dummy", "api": "openai-completions",
   "models": [{"id": "gpt-5.4", "name": "fake", "reasoning": false, "input": ["text"], "contextWindow": 128000, "maxTokens": 100}]}}}}
JSON
	case $scenario in
	compaction)
		# [[inflate]] reports 900000 input tokens: OpenClaw compacts at its
		# threshold, then the next turn reads the summary.
		openclaw "Run a command for me. [[shell: echo hello from the tool]]"
		openclaw "Second turn; report a large usage. [[inflate]]"
		openclaw "A turn after the compaction."
		;;
	*)
		echo "record.sh: unknown scenario $scenario" >&2
		exit 2
		;;
	esac
	kill "$FAKEPID"
	wait "$FAKEPID" 2>/dev/null || true
	FAKEPID=
	D=$OUT/$scenario
	rm -rf "${D:?}"
	"$TMP/dump" -db "$S/home/.openclaw/agents/main/agent/openclaw-agent.sqlite" -requests "$S/requests" -out "$D"
	sed -i -e "s#$TMP#/tmp/ctxfold-openclaw#g" "$D/transcript_events.jsonl" "$D"/requests/*.json
done
