#!/usr/bin/env bash
# Re-records the Factory Droid interop fixtures (docs/INTEROP-droid.md):
# installs the pinned client under $HOME/.cache (never in the repo), runs
# each scenario against the fake OpenAI provider on 127.0.0.1 with a
# throw-away HOME (a customModels entry of provider
# generic-chat-completion-api), and writes the normalised session file and
# captured requests to testdata/interop/droid/$VERSION/<scenario>/ (or $OUT).
#
# Usage: interop/droid/record.sh [scenario...]   (default: all)
# Env:   OUT=dir   write there instead of testdata (the live test does this)
#        KEEP=1    keep the temporary directory for inspection
#        CTXFOLD_DROID_BIN=path   record with that client (a newer one)
#                  instead of the pinned one; the fixtures go under its version
set -euo pipefail

VERSION=0.215.0 # the pinned client
REPO=$(cd "$(dirname "$0")/../.." && pwd)
if [ -n "${CTXFOLD_DROID_BIN:-}" ]; then
	DROID=$CTXFOLD_DROID_BIN
	VERSION=$("$DROID" --version | tail -1)
else
	CACHE=${CTXFOLD_INTEROP_CACHE:-$HOME/.cache/ctxfold-interop}/droid-$VERSION
	DROID=$CACHE/node_modules/droid/bin/droid
	if [ ! -x "$DROID" ] || [ "$("$DROID" --version 2>/dev/null | tail -1)" != "$VERSION" ]; then
		mkdir -p "$CACHE"
		npm install --no-audit --no-fund --prefix "$CACHE" "droid@$VERSION" >&2
	fi
fi
OUT=${OUT:-$REPO/testdata/interop/droid/$VERSION}
ALL="chat tool tool-error parallel compaction compaction-twice compaction-manual"
SCENARIOS=${*:-$ALL}

TMP=$(mktemp -d /tmp/ctxfold-droid-XXXXXX)
FAKEPID=
cleanup() {
	[ -n "$FAKEPID" ] && kill "$FAKEPID" 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
(cd "$REPO" && go build -o "$TMP/fakeopenai" ./internal/fake/openai/cmd/fakeopenai && go build -o "$TMP/normalize" ./interop/droid/normalize && go build -o "$TMP/rpcdrive" ./interop/droid/rpcdrive)

# droid runs one session of the current scenario: each argument is one user
# turn, sent in order on standard input (droid exec's streaming input; a
# later `droid exec -s ID` needs a Factory login, which a fake provider has
# not), bounded in time.
droid() {
	for p in "$@"; do
		printf '%s' "$p" | sed 's/\\/\\\\/g; s/"/\\"/g; s/^/{"role":"user","content":"/; s/$/"}/'
		echo
	done >"$S/input.jsonl"
	(cd "$S/work" && HOME="$S/home" NO_COLOR=1 timeout 120 "$DROID" exec --auto low -m custom:fake-model \
		--input-format stream-json -o stream-json <"$S/input.jsonl" >>"$S/client.log" 2>&1) ||
		{ echo "record.sh: droid failed; see $S/client.log" >&2; tail -20 "$S/client.log" >&2; exit 1; }
}

# rpc runs one process of the current scenario through Droid's JSON-RPC
# protocol (interop/droid/rpcdrive), bounded in time.
rpc() {
	(cd "$S/work" && HOME="$S/home" NO_COLOR=1 "$TMP/rpcdrive" -droid "$DROID" -timeout 2m "$@" 2>>"$S/client.log") ||
		{ echo "record.sh: droid (JSON-RPC) failed; see $S/client.log" >&2; tail -20 "$S/client.log" >&2; exit 1; }
}

for scenario in $SCENARIOS; do
	# A fixed path per scenario, so the normalised files do not depend on mktemp.
	S=$TMP/$scenario
	mkdir -p "$S/home/.factory" "$S/work" "$S/requests"
	"$TMP/fakeopenai" -record "$S/requests" -url-file "$S/url" -timeout 5m 2>"$S/fake.log" &
	FAKEPID=$!
	for _ in $(seq 100); do [ -s "$S/url" ] && break; sleep 0.1; done
	[ -s "$S/url" ] || { echo "record.sh: the fake provider did not start" >&2; exit 1; }
	# maxContextLimit is the custom model's window as Droid's settings give
	# it (ctxfold estimate reads it; Droid itself compacts at its own
	# compactionTokenLimit, so the recordings do not depend on it).
	cat >"$S/home/.factory/settings.json" <<JSON
{"customModels":[{"model":"fake-model","displayName":"Fake","baseUrl":"$(cat "$S/url")","apiKey":"dummy","provider":"generic-chat-completion-api","maxOutputTokens":1024,"maxContextLimit":200000}]}
JSON
	case $scenario in
	chat) droid "Hello. Reply briefly." "A second turn." ;;
	tool) droid "Run a command for me. [[shell: echo hello from the tool]]" "Thanks. One more word?" ;;
	tool-error) droid "List a missing directory. [[shell: ls /nonexistent-ctxfold-dir]]" ;;
	parallel) droid "Two commands at once. [[parallel: echo one ;; echo two]]" ;;
	# [[inflate]] makes the reply report a usage above the window, so Droid
	# compacts by itself before the next request.
	compaction) droid "First turn. [[shell: echo before compaction]]" "Second turn; report a large usage. [[inflate]]" "A turn after the compaction." ;;
	compaction-twice) droid "First turn. [[shell: echo one]]" "Second; report a large usage. [[inflate]]" "Third; again. [[inflate]]" "A turn after both compactions." ;;
	# Droid's manual compaction (/compact) through its JSON-RPC protocol:
	# two turns, droid.compact_session (a new session naming the old one
	# as its parent), then a second process loads the new session and
	# takes one more turn.
	compaction-manual)
		rpc -compact "First turn. [[shell: echo before manual compaction]]" "Second turn." >"$S/new-session"
		rpc -load "$(cat "$S/new-session")" "A turn after the manual compaction."
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
	"$TMP/normalize" -root "$S" -out "$OUT/$scenario"
done
