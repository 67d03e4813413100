#!/usr/bin/env bash
# Re-records the Codex CLI interop fixtures (docs/INTEROP-codex.md): installs
# the pinned client under $HOME/.cache (never in the repo), runs each
# scenario against the fake OpenAI provider on 127.0.0.1 with a throw-away
# HOME/CODEX_HOME, and writes the normalised rollouts and captured requests
# to testdata/interop/codex/$VERSION/<scenario>/ (or to $OUT).
#
# Usage: interop/codex/record.sh [scenario...]   (default: all)
# Env:   OUT=dir   write there instead of testdata (the live test does this)
#        KEEP=1    keep the temporary directory for inspection
#        MODEL=name  the default scenario's model (else the client's default)
#        CTXFOLD_CODEX_BIN=path   record with that client (a newer one) instead
#                  of the pinned one; the fixtures go under its version
set -euo pipefail

VERSION=0.169.0 # the pinned client
REPO=$(cd "$(dirname "$0")/../.." && pwd)
if [ -n "${CTXFOLD_CODEX_BIN:-}" ]; then
	CODEX=$CTXFOLD_CODEX_BIN
	VERSION=$("$CODEX" --version | sed 's/^codex-cli //')
else
	CACHE=${CTXFOLD_INTEROP_CACHE:-$HOME/.cache/ctxfold-interop}/codex-$VERSION
	CODEX=$CACHE/node_modules/.bin/codex
	if [ ! -x "$CODEX" ] || [ "$("$CODEX" --version 2>/dev/null)" != "codex-cli $VERSION" ]; then
		mkdir -p "$CACHE"
		npm install --no-audit --no-fund --prefix "$CACHE" "@openai/codex@$VERSION" >&2
	fi
fi
OUT=${OUT:-$REPO/testdata/interop/codex/$VERSION}
ALL="chat tool tool-error parallel compaction compaction-limit reasoning fork subagent patch"
SCENARIOS=${*:-$ALL}

TMP=$(mktemp -d /tmp/ctxfold-codex-XXXXXX)
FAKEPID=
cleanup() {
	[ -n "$FAKEPID" ] && kill "$FAKEPID" 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
(cd "$REPO" && go build -o "$TMP/fakeopenai" ./internal/fake/openai/cmd/fakeopenai && go build -o "$TMP/normalize" ./interop/codex/normalize)

# codex runs one client command of the current scenario, bounded in time.
codex() {
	(cd "$S/work" && HOME="$S/home" CODEX_HOME="$S/home/.codex" FAKE_OPENAI_KEY=dummy NO_COLOR=1 \
		timeout 120 "$CODEX" exec --skip-git-repo-check "$@" </dev/null >>"$S/client.log" 2>&1) ||
		{ echo "record.sh: codex $* failed; see $S/client.log" >&2; tail -20 "$S/client.log" >&2; exit 1; }
}

for scenario in $SCENARIOS; do
	# A fixed path per scenario, so the normalised files do not depend on mktemp.
	S=$TMP/$scenario
	mkdir -p "$S/home/.codex" "$S/work" "$S/requests"
	"$TMP/fakeopenai" -record "$S/requests" -url-file "$S/url" -timeout 5m 2>"$S/fake.log" &
	FAKEPID=$!
	for _ in $(seq 100); do [ -s "$S/url" ] && break; sleep 0.1; done
	[ -s "$S/url" ] || { echo "record.sh: the fake provider did not start" >&2; exit 1; }
	extra=
	[ "$scenario" = compaction ] && extra='model_auto_compact_token_limit = 200000'
	# A limit below what every request reports (the fake's usage is a
	# count of the body): Codex compacts before each next request, by
	# itself (the fake provider has no compaction endpoint), with the
	# usage the requests really report.
	[ "$scenario" = compaction-limit ] && extra='model_auto_compact_token_limit = 9000'
	# gpt-5.5 offers the multi-agent tools only behind tool_search, which the
	# fake does not implement; with a model outside the client's catalog
	# (fallback metadata) they are offered directly.
	model=gpt-5.5
	[ "$scenario" = subagent ] && model=gpt-5.1-codex
	settings="model = \"$model\"
approval_policy = \"never\"
sandbox_mode = \"danger-full-access\""
	# default: the client as a new user runs it (its default model, tools,
	# approval and sandbox; no AGENTS.md, no MCP server), for the prior's
	# first request (scripts/record-priors.sh; docs/ACCURACY.md, "The prior").
	# MODEL=name records it with that model instead (the one a rollout
	# records: Codex's instructions and tools follow the model).
	[ "$scenario" = default ] && settings=${MODEL:+model = \"$MODEL\"}
	cat >"$S/home/.codex/config.toml" <<TOML
model_provider = "fake"
$settings
$extra

[model_providers.fake]
name = "fake"
base_url = "$(cat "$S/url")"
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"
TOML
	case $scenario in
	default)
		codex "Hello. Reply briefly."
		;;
	chat)
		codex "Hello. Reply briefly."
		codex resume --last "A second turn, after resuming."
		codex resume --last "A third turn."
		;;
	tool)
		codex "Run a command for me. [[shell: echo hello from the tool]]"
		codex resume --last "Thanks. One more word?"
		;;
	tool-error)
		codex "List a missing directory. [[shell: ls /nonexistent-ctxfold-dir]]"
		;;
	parallel)
		codex "Two commands at once. [[parallel: echo one ;; echo two]]"
		;;
	reasoning)
		codex "Think before acting. [[reason]] [[shell: echo thought through]]"
		codex resume --last "Again, briefly. [[reason]]"
		;;
	fork)
		codex "Before the fork. [[shell: echo trunk]]"
		id=$(find "$S/home/.codex/sessions" -name 'rollout-*.jsonl' | sed -E 's/.*-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/\1/')
		codex fork "$id" "On the fork."
		codex resume "$id" "On the original, after the fork point."
		;;
	patch)
		codex "Add a file. [[patch: hello.txt]]"
		;;
	subagent)
		codex "Delegate this. [[spawn: Say hi from the helper.]]"
		;;
	compaction-limit)
		codex "First turn. [[shell: echo before compaction]]"
		codex resume --last "A turn after the compaction."
		;;
	compaction)
		codex "First turn; report a large usage. [[inflate]] [[shell: echo before compaction]]"
		codex resume --last "A turn after the compaction."
		codex resume --last "And one more."
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
