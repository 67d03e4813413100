#!/usr/bin/env bash
# Re-records the pi interop fixtures (docs/INTEROP-pi.md): installs the
# pinned client under $HOME/.cache (never in the repo), runs each scenario
# against the fake OpenAI provider (Chat Completions) on 127.0.0.1 with a
# throw-away HOME, and writes the session file and the captured requests,
# normalised, to testdata/interop/pi/$VERSION/<scenario>/ (or to $OUT).
#
# Usage: interop/pi/record.sh [scenario...]   (default: all)
# Env:   OUT=dir   write there instead of testdata (the live test does this)
#        KEEP=1    keep the temporary directory for inspection
#        CTXFOLD_PI_BIN=path   record with that client (a newer one) instead
#                  of the pinned one; the fixtures go under its version
set -euo pipefail

VERSION=0.73.1 # the pinned client
REPO=$(cd "$(dirname "$0")/../.." && pwd)
if [ -n "${CTXFOLD_PI_BIN:-}" ]; then
	PI=$CTXFOLD_PI_BIN
	VERSION=$("$PI" --version 2>&1)
else
	CACHE=${CTXFOLD_INTEROP_CACHE:-$HOME/.cache/ctxfold-interop}/pi-$VERSION
	PI=$CACHE/node_modules/.bin/pi
	if [ ! -x "$PI" ] || [ "$("$PI" --version 2>&1)" != "$VERSION" ]; then
		mkdir -p "$CACHE"
		npm install --no-audit --no-fund --prefix "$CACHE" "@mariozechner/pi-coding-agent@$VERSION" >&2
	fi
fi
OUT=${OUT:-$REPO/testdata/interop/pi/$VERSION}
ALL="chat tool tool-error compaction compaction-limit anthropic rpc"
SCENARIOS=${*:-$ALL}

TMP=$(mktemp -d /tmp/ctxfold-pi-XXXXXX)
FAKEPID=
cleanup() {
	[ -n "$FAKEPID" ] && kill "$FAKEPID" 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
(cd "$REPO" && go build -o "$TMP/fakeopenai" ./internal/fake/openai/cmd/fakeopenai && go build -o "$TMP/fakeanthropic" ./internal/fake/anthropic/cmd/fakeanthropic)

# pi runs one prompt of the current scenario, continuing its session,
# bounded in time.
pi() {
	(cd "$S/work" && HOME="$S/home" PI_OFFLINE=1 NO_COLOR=1 \
		timeout 120 "$PI" -p -c --provider fake --model "$model" "$@" </dev/null >>"$S/client.log" 2>&1) ||
		{ echo "record.sh: pi $* failed; see $S/client.log" >&2; tail -20 "$S/client.log" >&2; exit 1; }
}

# rpc drives one `pi --mode rpc` session through a FIFO: each line a
# command (docs/rpc.md of the package), each awaited by its response or
# by the end of the agent's run; what pi prints goes to $S/rpc.out.
rpc() {
	mkfifo "$S/in"
	(cd "$S/work" && HOME="$S/home" PI_OFFLINE=1 NO_COLOR=1 timeout 300 "$PI" --mode rpc --provider fake --model "$model" \
		<"$S/in" >"$S/rpc.out" 2>>"$S/client.log") &
	local pid=$! ends=0
	exec 9>"$S/in"
	while IFS= read -r cmd; do
		echo "$cmd" >&9
		case $cmd in
		*'"type":"prompt"'*) ends=$((ends + 1)) pattern='"type":"agent_end"' count=$ends ;;
		*) pattern="\"id\":\"$(echo "$cmd" | sed -E 's/.*"id":"([^"]*)".*/\1/')\"" count=1 ;;
		esac
		for _ in $(seq 600); do
			[ "$(grep -c "$pattern" "$S/rpc.out" 2>/dev/null)" -ge "$count" ] && break
			sleep 0.2
		done
		[ "$(grep -c "$pattern" "$S/rpc.out" 2>/dev/null)" -ge "$count" ] ||
			{ echo "record.sh: pi --mode rpc: no answer to $cmd; see $S/rpc.out" >&2; exit 1; }
	done
	exec 9>&-
	wait "$pid"
}

# normalise replaces what changes from run to run: the temporary root and
# the date in the system prompt.
normalise() {
	sed -e "s#$TMP#/tmp/ctxfold-pi#g" -e 's#Current date: [0-9-]*#Current date: 2026-01-01#' "$1"
}

for scenario in $SCENARIOS; do
	S=$TMP/$scenario
	mkdir -p "$S/home/.pi/agent" "$S/work" "$S/requests"
	# The anthropic scenario talks to the fake Anthropic provider (pi's
	# anthropic-messages API), the others to the fake OpenAI one.
	api=openai-completions model=gpt-5.4
	if [ "$scenario" = anthropic ]; then
		api=anthropic-messages model=claude-sonnet-4-5
		"$TMP/fakeanthropic" -record "$S/requests" -url-file "$S/url" -max-lifetime 5m 2>"$S/fake.log" &
	else
		"$TMP/fakeopenai" -record "$S/requests" -url-file "$S/url" -timeout 5m 2>"$S/fake.log" &
	fi
	FAKEPID=$!
	for _ in $(seq 100); do [ -s "$S/url" ] && break; sleep 0.1; done
	[ -s "$S/url" ] || { echo "record.sh: the fake provider did not start" >&2; exit 1; }
	# The model is pi's default for OpenAI (gpt-5.4), served by the fake.
	# compaction-limit: a window whose threshold (window - reserveTokens)
	# the requests' own usage crosses after a few turns.
	window=128000 reserve=16384
	case $scenario in compaction-limit | anthropic) window=1750 reserve=150 ;; esac
	cat >"$S/home/.pi/agent/models.json" <<JSON
{"providers":{"fake":{"baseUrl":"$(cat "$S/url")","api":"$api","apiKey":"dummy",
"compat":{"supportsDeveloperRole":false,"supportsReasoningEffort":false},
"models":[{"id":"$model","contextWindow":$window,"maxTokens":100}]}}}
JSON
	# A small kept tail, so a compaction summarises the earlier turns.
	echo "{\"compaction\":{\"keepRecentTokens\":20,\"reserveTokens\":$reserve}}" >"$S/home/.pi/agent/settings.json"
	case $scenario in
	chat)
		pi "Hello. Reply briefly."
		pi "A second turn, continuing the session."
		pi "A third turn."
		pi "A fourth and last turn."
		;;
	tool)
		pi "Run a command for me. [[shell: echo hello from the tool]]"
		pi "Thanks. One more word?"
		pi "Another command. [[shell: printf 'a\\nb\\n']]"
		;;
	tool-error)
		pi "List a missing directory. [[shell: ls /nonexistent-ctxfold-dir]]"
		;;
	compaction)
		# [[inflate]] reports 900000 input tokens: over the window, so pi
		# compacts when the turn ends, then the next turns read the summary.
		pi "First turn. [[shell: echo before compaction]]"
		pi "Second turn; report a large usage. [[inflate]]"
		pi "A turn after the compaction."
		pi "Third turn; again a large usage. [[inflate]]"
		pi "And one more."
		;;
	anthropic)
		for w in one two three four; do
			pi "Turn $w. [[bash: echo $w]]"
		done
		pi "A last turn."
		;;
	rpc)
		# A user's own shell command (a bashExecution entry) and a manual
		# compaction (/compact's RPC command), each followed by a turn.
		rpc <<'CMDS'
{"id":"p1","type":"prompt","message":"Run a command for me. [[shell: echo one]]"}
{"id":"b1","type":"bash","command":"echo from the user"}
{"id":"p2","type":"prompt","message":"What did my command print?"}
{"id":"c1","type":"compact"}
{"id":"p3","type":"prompt","message":"A turn after the manual compaction."}
CMDS
		;;
	compaction-limit)
		for w in one two three four five six; do
			pi "Turn $w. [[shell: echo $w]]"
		done
		pi "A last turn."
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
	mkdir -p "$D/requests"
	files=("$S"/home/.pi/agent/sessions/*/*.jsonl)
	[ "${#files[@]}" = 1 ] || { echo "record.sh: expected one session file in $scenario, got ${#files[@]}" >&2; exit 1; }
	normalise "${files[0]}" >"$D/session.jsonl"
	# request-NNN.json (the fake Anthropic provider names them NNNN-messages.json).
	for r in "$S"/requests/*.json; do
		n=$(basename "$r" | grep -oE '[0-9]+' | head -1)
		normalise "$r" >"$D/requests/request-$(printf %03d "$((10#$n))").json"
	done
done
