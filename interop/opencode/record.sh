#!/usr/bin/env bash
# Records the OpenCode interop fixtures (or Kilo's, with CLIENT=kilo):
# installs the pinned client under $HOME/.cache (never in the repo), runs
# each scenario against the fake OpenAI provider (internal/fake/openai,
# Chat Completions) with a temporary HOME, and writes the client's export
# of the session, its database tables as SQL and the captured requests to
# testdata/interop/<client>/<version>/<scenario>/ (or under $OUT when set,
# which the live test uses). See docs/INTEROP-opencode.md.
#
#   interop/opencode/record.sh                 # every scenario
#   interop/opencode/record.sh chat tool       # some
#   CLIENT=kilo interop/opencode/record.sh     # Kilo
#   CLIENT=kilo CTXFOLD_KILO_BIN=.../kilo-7.7.9/node_modules/@kilocode/cli-linux-x64/bin/kilo \
#     interop/opencode/record.sh               # Kilo 7.7.9 (docs/INTEROP-opencode.md)
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD

CLIENT=${CLIENT:-opencode}
case $CLIENT in
opencode)
  VERSION=1.18.33 PKG=opencode-ai BIN=opencode GIVEN=${CTXFOLD_OPENCODE_BIN:-} ;;
kilo)
  VERSION=7.7.7 PKG=@kilocode/cli BIN=kilo GIVEN=${CTXFOLD_KILO_BIN:-} ;;
*)
  echo "CLIENT is opencode or kilo" >&2; exit 2 ;;
esac
# Every client run is bounded; a hung client fails the recording.
RUN_TIMEOUT=${RUN_TIMEOUT:-120}

if [ -n "$GIVEN" ]; then
  # A given client (a newer one): the fixtures go under its version.
  client_bin=$GIVEN
  VERSION=$("$client_bin" --version)
else
  CLI_DIR=${CTXFOLD_INTEROP_CACHE:-$HOME/.cache/ctxfold-interop}/$CLIENT-$VERSION
  client_bin=$CLI_DIR/node_modules/.bin/$BIN
  if [ ! -x "$client_bin" ] || [ "$("$client_bin" --version 2>/dev/null)" != "$VERSION" ]; then
    echo "installing $PKG@$VERSION under $CLI_DIR" >&2
    mkdir -p "$CLI_DIR"
    npm install --prefix "$CLI_DIR" --no-audit --no-fund --silent "$PKG@$VERSION" >/dev/null
  fi
fi
OUT=${OUT:-$repo/testdata/interop/$CLIENT/$VERSION}

work=$(mktemp -d /tmp/ctxfold-$CLIENT.XXXXXXXX)
fake_pid=
cleanup() {
  if [ -n "$fake_pid" ]; then kill "$fake_pid" 2>/dev/null || true; wait "$fake_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/fakeopenai" ./internal/fake/openai/cmd/fakeopenai
go build -o "$work/normalize" ./interop/opencode/normalize

# start NAME [COMPACTION]: a fresh HOME, project and fake provider; the
# config names the fake as an OpenAI-compatible provider (COMPACTION is
# the config's compaction object, default none).
start() {
  name=$1
  root=$work/$name
  mkdir -p "$root/home/.config/$CLIENT" "$root/project" "$root/req"
  "$work/fakeopenai" -url-file "$root/url" -record "$root/req" -timeout 10m 2>"$root/fake.log" &
  fake_pid=$!
  for _ in $(seq 100); do [ -s "$root/url" ] && break; sleep 0.1; done
  [ -s "$root/url" ] || { echo "fake provider did not start" >&2; exit 1; }
  local extra=
  [ -n "${2:-}" ] && extra="\"compaction\": $2,"
  local config=opencode.json
  [ "$CLIENT" = kilo ] && config=kilo.json
  cat >"$root/home/.config/$CLIENT/$config" <<EOF
{"autoupdate": false, "share": "disabled", $extra
 "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake",
   "options": {"baseURL": "$(cat "$root/url")", "apiKey": "fake-interop-key"},
   "models": {"fake-model": {"name": "Fake Model", "limit": {"context": 200000, "output": 8000}}}}},
 "model": "fake/fake-model", "small_model": "fake/fake-model"}
EOF
  printf 'hello from the interop fixture\n' >"$root/project/notes.txt"
}

# oc ARGS...: one client run in the scenario's project.
oc() {
  (cd "$root/project" && HOME=$root/home OPENCODE_DISABLE_MODELS_FETCH=1 NO_COLOR=1 timeout "$RUN_TIMEOUT" "$client_bin" "$@" \
    >>"$root/stdout" 2>>"$root/stderr") || { echo "$BIN $* failed; stderr:" >&2; tail -20 "$root/stderr" >&2; exit 1; }
}

# finish: stop the fake, export each session with the client itself and
# write the normalised fixture.
finish() {
  kill "$fake_pid"; wait "$fake_pid" 2>/dev/null || true; fake_pid=
  local db=$root/home/.local/share/$CLIENT/$CLIENT.db
  local n=0
  for id in $(HOME=$root/home "$work/normalize" -db "$db" -list); do
    n=$((n + 1))
    (cd "$root/project" && HOME=$root/home OPENCODE_DISABLE_MODELS_FETCH=1 timeout "$RUN_TIMEOUT" "$client_bin" export "$id" \
      >"$root/export-$n.json" 2>>"$root/stderr")
  done
  "$work/normalize" -root "$root" -db "$db" -out "$OUT/$name"
  echo "recorded $name: $(wc -l <"$OUT/$name/requests.jsonl") requests" >&2
}

scenario_chat() {
  start chat
  oc run -m fake/fake-model "Hello, fake provider. Say hi."
  oc run -c -m fake/fake-model "Second turn."
  finish
}

scenario_tool() {
  start tool
  oc run -m fake/fake-model "List the files here. [[shell: ls -1]]"
  finish
}

# The fake reports 900000 input tokens for [[inflate]], past the model's
# 200000-token window: the client compacts on its own (automatic, a
# compaction part and a summary: true message), continues with its
# synthetic "Continue …" turn, and the next run sends the summary.
scenario_compaction() {
  start compaction
  oc run -m fake/fake-model "List the files here. [[shell: ls -1]]"
  oc run -c -m fake/fake-model "Now a long answer. [[inflate]]"
  oc run -c -m fake/fake-model "One more turn."
  finish
}

# The same with compaction.tail_turns 1: the client keeps the last turn
# verbatim after the summary (the compaction part's tail_start_id).
scenario_compaction_tail() {
  start compaction-tail '{"tail_turns": 1}'
  oc run -m fake/fake-model "List the files here. [[shell: ls -1]]"
  oc run -c -m fake/fake-model "Now a long answer. [[inflate]]"
  oc run -c -m fake/fake-model "One more turn."
  finish
}

scenarios=("$@")
# Kilo (7.7.7, 7.7.9) keeps no tail whatever compaction.tail_turns says (its
# compaction part has no tail_start_id): compaction-tail is OpenCode's.
if [ ${#scenarios[@]} -eq 0 ]; then
  scenarios=(chat tool compaction compaction-tail)
  [ "$CLIENT" = kilo ] && scenarios=(chat tool compaction)
fi
for s in "${scenarios[@]}"; do
  "scenario_${s//-/_}"
done
