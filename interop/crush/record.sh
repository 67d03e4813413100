#!/usr/bin/env bash
# Records the Crush interop fixtures (docs/INTEROP-crush.md): runs each
# scenario with the real Crush (`crush run`, its non-interactive mode)
# against the fake OpenAI provider (internal/fake/openai, Chat Completions)
# on 127.0.0.1 with a throw-away HOME and XDG folders and a project
# crush.json naming the fake as an openai-compat provider, then writes
# the project's .crush/crush.db tables as SQL (db.sql) and the captured
# requests (requests.jsonl), normalised, to
# testdata/interop/crush/<version>/<scenario>/ (or under $OUT when set,
# which the live test uses).
#
# Crush is a Go program. Its npm package (@charmland/crush) downloads the
# release binary in its postinstall step, which fails where only package
# registries are reachable, and the Go module proxy refuses its module
# (403), so the pinned client is built from a source tree of its tag
# (CTXFOLD_CRUSH_SRC, or the copy kept beside the binary) with go build;
# its dependencies come from the module proxy.
#
#   interop/crush/record.sh                  # every scenario
#   interop/crush/record.sh chat tool        # some
#   interop/crush/record.sh --install        # only install; exit 3 when impossible
#   CTXFOLD_CRUSH_BIN=path interop/crush/record.sh   # another (newer) client:
#                                            # the fixtures go under its version
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD

VERSION=0.90.0 # the pinned client (tag v0.90.0)
COMMIT=70d321626ca20ad8fcfb99e61bbe377a6b91748c
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
CLI_DIR=${CTXFOLD_INTEROP_CACHE:-$HOME/.cache/ctxfold-interop}/crush-$VERSION

# install: build the pinned Crush into $CLI_DIR/bin from its source tree
# (CTXFOLD_CRUSH_SRC or $CLI_DIR/src, which must be tag v$VERSION).
install() {
  local bin=$CLI_DIR/bin/crush
  if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q " $VERSION\$"; then return 0; fi
  local src=${CTXFOLD_CRUSH_SRC:-$CLI_DIR/src}
  if [ ! -f "$src/go.mod" ] || ! grep -q '^module github.com/charmbracelet/crush$' "$src/go.mod"; then
    echo "record.sh: no Crush $VERSION: build it from a source tree of tag v$VERSION (CTXFOLD_CRUSH_SRC=dir)," >&2
    echo "  or name a crush binary with CTXFOLD_CRUSH_BIN (its npm package downloads the binary at install time)" >&2
    return 3
  fi
  echo "building Crush $VERSION from $src into $CLI_DIR/bin" >&2
  mkdir -p "$CLI_DIR/bin"
  (cd "$src" && go build -trimpath -ldflags "-s -w -X github.com/charmbracelet/crush/internal/version.Version=$VERSION \
    -X github.com/charmbracelet/crush/internal/version.Commit=$COMMIT" -o "$CLI_DIR/bin/crush" .)
}

if [ "${1:-}" = --install ]; then
  install
  exit
fi
if [ -n "${CTXFOLD_CRUSH_BIN:-}" ]; then
  client_bin=$CTXFOLD_CRUSH_BIN
  VERSION=$("$client_bin" --version | awk '{print $NF}')
  VERSION=${VERSION#v}
else
  install
  client_bin=$CLI_DIR/bin/crush
fi
OUT=${OUT:-$repo/testdata/interop/crush/$VERSION}

work=$(mktemp -d /tmp/ctxfold-crush.XXXXXXXX)
fake_pid=
cleanup() {
  if [ -n "$fake_pid" ]; then kill "$fake_pid" 2>/dev/null || true; wait "$fake_pid" 2>/dev/null || true; fi
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/fakeopenai" ./internal/fake/openai/cmd/fakeopenai
go build -o "$work/fakeanthropic" ./internal/fake/anthropic/cmd/fakeanthropic
go build -o "$work/normalize" ./interop/crush/normalize

# start NAME [TYPE]: a fresh HOME, project and fake provider; the
# project's crush.json names the fake as the only provider (no default
# providers, no provider list update, no metrics: nothing leaves
# 127.0.0.1), of TYPE openai-compat (default: the fake OpenAI provider)
# or anthropic (the fake Anthropic one).
start() {
  name=$1
  local type=${2:-openai-compat}
  root=$work/$name
  mkdir -p "$root/home" "$root/project" "$root/req"
  if [ "$type" = anthropic ]; then
    "$work/fakeanthropic" -url-file "$root/url" -record "$root/req" -max-lifetime 10m 2>"$root/fake.log" &
  else
    "$work/fakeopenai" -url-file "$root/url" -record "$root/req" -timeout 10m 2>"$root/fake.log" &
  fi
  fake_pid=$!
  for _ in $(seq 100); do [ -s "$root/url" ] && break; sleep 0.1; done
  [ -s "$root/url" ] || { echo "fake provider did not start" >&2; exit 1; }
  cat >"$root/project/crush.json" <<JSON
{"options": {"disable_metrics": true, "disable_provider_auto_update": true, "disable_default_providers": true},
 "providers": {"fake": {"type": "$type", "base_url": "$(cat "$root/url")", "api_key": "fake-interop-key",
   "discover_models": false,
   "models": [{"id": "fake-model", "name": "Fake Model", "context_window": 200000, "default_max_tokens": 4000}]}},
 "models": {"large": {"model": "fake-model", "provider": "fake"}, "small": {"model": "fake-model", "provider": "fake"}}}
JSON
  printf 'hello from the interop fixture\n' >"$root/project/notes.txt"
}

# cr ARGS...: one `crush run` in the scenario's project, bounded in time.
# Crush checks for a newer release at every start, with no setting to turn
# it off: the proxy variables send that request to a closed port on
# 127.0.0.1 (it fails quietly, as offline) instead of a DNS lookup; the
# fake, on 127.0.0.1, is never proxied.
cr() {
  (cd "$root/project" && HTTPS_PROXY=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 NO_PROXY=127.0.0.1,localhost HOME=$root/home XDG_CONFIG_HOME=$root/home/.config XDG_DATA_HOME=$root/home/.local/share \
    XDG_CACHE_HOME=$root/home/.cache CRUSH_DISABLE_METRICS=1 DO_NOT_TRACK=1 CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=1 \
    NO_COLOR=1 timeout "$RUN_TIMEOUT" "$client_bin" run -q "$@" </dev/null >>"$root/stdout" 2>>"$root/stderr") ||
    { echo "crush run $* failed; stderr:" >&2; tail -20 "$root/stderr" >&2; exit 1; }
}

# finish: stop the fake and write the normalised fixture.
finish() {
  kill "$fake_pid"; wait "$fake_pid" 2>/dev/null || true; fake_pid=
  "$work/normalize" -root "$root" -db "$root/project/.crush/crush.db" -out "$OUT/$name"
  echo "recorded $name: $(wc -l <"$OUT/$name/requests.jsonl") requests" >&2
}

scenario_chat() {
  start chat
  cr "Hello, fake provider. Say hi."
  cr -C "Second turn."
  finish
}

scenario_tool() {
  start tool
  cr "List the files here. [[shell: ls -1]]"
  finish
}

# The fake reports 900000 input tokens for [[inflate]], past the model's
# 200000-token window: Crush summarizes on its own after that turn (a
# summary message named by the session's summary_message_id), and the
# next run sends the summary as a user message, then the new turn.
scenario_compaction() {
  start compaction
  cr "List the files here. [[shell: ls -1]]"
  cr -C "Now a long answer. [[inflate]]"
  cr -C "One more turn."
  finish
}

# Two automatic summaries: the second summarizes the first summary and
# the turns after it (Crush sends only what follows the latest summary).
scenario_compaction_twice() {
  start compaction-twice
  cr "List the files here. [[shell: ls -1]]"
  cr -C "Now a long answer. [[inflate]]"
  cr -C "Another long answer. [[inflate]]"
  cr -C "One more turn."
  finish
}

# [[spawn: TASK]] calls Crush's agent tool: a sub-agent session of its
# own (parent_session_id), whose answer is the call's result.
scenario_subagent() {
  start subagent
  cr "Ask a helper. [[spawn: Say hi from the helper.]]"
  finish
}

# The same tool call and one more turn over Anthropic Messages (the fake's
# [[bash: CMD]] marker): Crush's request carries cache markers and its
# todo reminder as the first text block of the first user message.
scenario_anthropic() {
  start anthropic anthropic
  cr "List the files here. [[bash: ls -1]]"
  cr -C "Thanks, that is all."
  finish
}

scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(chat tool compaction compaction-twice subagent anthropic)
for s in "${scenarios[@]}"; do
  "scenario_${s//-/_}"
done
