#!/usr/bin/env bash
# Records the Gemini CLI interop fixtures: installs the pinned client under
# $HOME/.cache (never in the repo), runs each scenario against the fake
# Gemini API (internal/fake/gemini) with a temporary HOME, and writes the
# normalised transcripts and captured requests to
# testdata/interop/gemini-cli/<version>/<scenario>/ (or under $OUT when set,
# which the live test uses). See docs/INTEROP-gemini-cli.md.
#
#   interop/gemini-cli/record.sh            # every scenario
#   interop/gemini-cli/record.sh chat tool  # some
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD

VERSION=0.61.0 # the pinned client
# Every client run is bounded; a hung client fails the recording.
RUN_TIMEOUT=${RUN_TIMEOUT:-120}

if [ -n "${CTXFOLD_GEMINI_BIN:-}" ]; then
  # A given client (a newer one): the fixtures go under its version.
  gemini_bin=$CTXFOLD_GEMINI_BIN
  VERSION=$("$gemini_bin" --version)
else
  CLI_DIR=${CTXFOLD_GEMINI_CLI_DIR:-${CTXFOLD_INTEROP_CACHE:-$HOME/.cache/ctxfold-interop}/gemini-cli-$VERSION}
  gemini_bin=$CLI_DIR/node_modules/.bin/gemini
  if [ ! -x "$gemini_bin" ] || [ "$("$gemini_bin" --version 2>/dev/null)" != "$VERSION" ]; then
    echo "installing @google/gemini-cli@$VERSION under $CLI_DIR" >&2
    mkdir -p "$CLI_DIR"
    npm install --prefix "$CLI_DIR" --no-audit --no-fund --silent "@google/gemini-cli@$VERSION" >/dev/null
  fi
fi
OUT=${OUT:-$repo/testdata/interop/gemini-cli/$VERSION}
# The installed package (its bin links to <package>/bundle/gemini.js): the
# system prompt names its built-in skills by path, which normalize replaces.
client_pkg=$(cd "$(dirname "$(readlink -f "$gemini_bin")")/.." && pwd)

work=$(mktemp -d /tmp/ctxfold-gemini.XXXXXXXX)
fake_pid=
cleanup() {
  if [ -n "$fake_pid" ]; then kill "$fake_pid" 2>/dev/null || true; wait "$fake_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/fakegemini" ./internal/fake/gemini/cmd/fakegemini
go build -o "$work/normalize" ./internal/fake/gemini/cmd/normalize

# start NAME [PROMPT_TOKENS]: a fresh HOME, project and fake provider.
start() {
  name=$1
  root=$work/$name
  mkdir -p "$root/home/.gemini" "$root/project"
  printf '%s\n' '{"security":{"auth":{"selectedType":"gemini-api-key"}}}' >"$root/home/.gemini/settings.json"
  printf 'hello from the interop fixture\n' >"$root/project/notes.txt"
  "$work/fakegemini" -url-file "$root/url" -requests "$root/requests.jsonl" -max-life 10m -prompt-tokens "${2:-0}" &
  fake_pid=$!
  for _ in $(seq 100); do [ -s "$root/url" ] && break; sleep 0.1; done
  [ -s "$root/url" ] || { echo "fake provider did not start" >&2; exit 1; }
}

# gem ARGS...: one client run in the scenario's project.
gem() {
  (cd "$root/project" && HOME=$root/home GOOGLE_GEMINI_BASE_URL=$(cat "$root/url") GEMINI_API_KEY=fake-interop-key \
    GEMINI_CLI_TRUST_WORKSPACE=true NO_COLOR=1 timeout "$RUN_TIMEOUT" "$gemini_bin" --yolo "$@" \
    >>"$root/stdout" 2>>"$root/stderr") || { echo "gemini $* failed; stderr:" >&2; tail -20 "$root/stderr" >&2; exit 1; }
}

# gem_command ARGS...: a run of a slash command that the CLI carries out
# and then refuses to report in -p mode ("not supported in non-interactive
# mode", exit 1); any other failure fails the recording.
gem_command() {
  (cd "$root/project" && HOME=$root/home GOOGLE_GEMINI_BASE_URL=$(cat "$root/url") GEMINI_API_KEY=fake-interop-key \
    GEMINI_CLI_TRUST_WORKSPACE=true NO_COLOR=1 timeout "$RUN_TIMEOUT" "$gemini_bin" --yolo "$@" \
    >>"$root/stdout" 2>>"$root/stderr") && return 0
  grep -q "not supported in non-interactive mode" "$root/stderr" || { echo "gemini $* failed; stderr:" >&2; tail -20 "$root/stderr" >&2; exit 1; }
}

# finish: stop the fake and write the normalised fixture.
finish() {
  kill "$fake_pid"; wait "$fake_pid" 2>/dev/null || true; fake_pid=
  chats=$(find "$root/home/.gemini/tmp" -maxdepth 2 -type d -name chats | head -1)
  "$work/normalize" -client "$client_pkg" -root "$root" -chats "$chats" -requests "$root/requests.jsonl" -out "$OUT/$name" -blobs "$OUT/blobs" \
    -checkpoints "$(dirname "$chats")"
  echo "recorded $name: $(wc -l <"$OUT/$name/requests.jsonl") requests" >&2
}

scenario_chat() {
  start chat
  gem -p "Hello, fake Gemini. Say hi."
  finish
}

scenario_tool() {
  start tool
  gem -p "List the files here. RUN: ls -1"
  finish
}

scenario_tool_error() {
  start tool-error
  gem -p "Show the missing file. RUN: cat missing.txt"
  finish
}

scenario_resume() {
  start resume
  gem -p "First turn."
  gem -p "Second turn." --resume latest
  gem -p "Third turn." --resume latest
  finish
}

scenario_resume_tool() {
  start resume-tool
  gem -p "List the files here. RUN: ls -1"
  gem -p "Thanks. Anything else?" --resume latest
  finish
}

# The fake reports a promptTokenCount near the window, so the CLI's own
# compression (a <state_snapshot> request and its verification) runs before
# the next request. Not in the first run: a resumed run starts from the
# CLI's own estimate of the history, and compression needs an earlier user
# turn to split at, so it happens after the second run's tool call.
scenario_compression() {
  start compression 1000000
  gem -p "List the files here. RUN: ls -1"
  gem -p "Now read the notes. RUN: cat notes.txt" --resume latest
  finish
}

# A sub-agent: the main model calls invoke_agent, the sub-agent's loop
# (its own transcript under chats/<parent session id>/) ends with
# complete_task.
scenario_subagent() {
  start subagent
  gem -p "Ask a helper. AGENT: generalist Count the files in this directory."
  finish
}

# /chat save in a resumed session: checkpoint-demo.json beside chats/.
scenario_checkpoint() {
  start checkpoint
  gem -p "List the files here. RUN: ls -1"
  gem_command -p "/chat save demo" --resume latest
  finish
}

scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(chat tool tool-error resume resume-tool compression subagent checkpoint)
for s in "${scenarios[@]}"; do
  "scenario_${s//-/_}"
done
