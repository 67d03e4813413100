#!/usr/bin/env bash
# Records the Qwen Code interop fixtures: installs the pinned client (and
# Node 22, which it needs) under $HOME/.cache (never in the repo), runs
# each scenario against the fake OpenAI provider (internal/fake/openai)
# with a temporary HOME, and writes the normalised chat recordings and
# captured requests to testdata/interop/qwen-code/<version>/<scenario>/ (or
# under $OUT when set, which the live test uses). See docs/INTEROP-qwen.md.
#
#   interop/qwen-code/record.sh              # every scenario
#   interop/qwen-code/record.sh chat tool    # some
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD

VERSION=0.24.4 # the pinned client
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
CACHE=${CTXFOLD_INTEROP_CACHE:-$HOME/.cache/ctxfold-interop}
NODE_DIR=${CTXFOLD_NODE22_DIR:-$HOME/.cache/ctxfold-node22}
node_bin=$NODE_DIR/node_modules/node/bin/node
if [ ! -x "$node_bin" ]; then
  echo "installing node@22 under $NODE_DIR" >&2
  npm install --prefix "$NODE_DIR" --no-audit --no-fund --silent node@22 >/dev/null
fi

# A client named by CTXFOLD_QWEN_BIN runs its "#!/usr/bin/env node" with it.
PATH=$(dirname "$node_bin"):$PATH

if [ -n "${CTXFOLD_QWEN_BIN:-}" ]; then
  # A given client (a newer one): the fixtures go under its version.
  qwen=("$CTXFOLD_QWEN_BIN")
  VERSION=$("$CTXFOLD_QWEN_BIN" --version)
else
  CLI_DIR=$CACHE/qwen-code-$VERSION
  entry=$CLI_DIR/node_modules/@qwen-code/qwen-code/cli-entry.js
  if [ ! -f "$entry" ]; then
    echo "installing @qwen-code/qwen-code@$VERSION under $CLI_DIR" >&2
    mkdir -p "$CLI_DIR"
    npm install --prefix "$CLI_DIR" --no-audit --no-fund --silent --engine-strict=false "@qwen-code/qwen-code@$VERSION" >/dev/null
  fi
  qwen=("$node_bin" "$entry")
fi
OUT=${OUT:-$repo/testdata/interop/qwen-code/$VERSION}

work=$(mktemp -d /tmp/ctxfold-qwen.XXXXXXXX)
fake_pid=
cleanup() {
  if [ -n "$fake_pid" ]; then kill "$fake_pid" 2>/dev/null || true; wait "$fake_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/fakeopenai" ./internal/fake/openai/cmd/fakeopenai
go build -o "$work/normalize" ./interop/qwen-code/normalize

# start NAME: a fresh HOME (managed auto-memory off: its background
# extractor is a side request of its own), project and fake provider.
start() {
  name=$1
  root=$work/$name
  mkdir -p "$root/home/.qwen" "$root/project"
  printf '%s\n' '{"memory":{"enableManagedAutoMemory":false,"enableManagedAutoDream":false}}' >"$root/home/.qwen/settings.json"
  printf 'hello from the interop fixture\n' >"$root/project/notes.txt"
  "$work/fakeopenai" -url-file "$root/url" -record "$root/req" -timeout 10m 2>>"$root/fake.log" &
  fake_pid=$!
  for _ in $(seq 100); do [ -s "$root/url" ] && break; sleep 0.1; done
  [ -s "$root/url" ] || { echo "fake provider did not start" >&2; exit 1; }
}

# qw ARGS...: one client run in the scenario's project.
qw() {
  (cd "$root/project" && HOME=$root/home OPENAI_BASE_URL=$(cat "$root/url") OPENAI_API_KEY=fake-interop-key \
    OPENAI_MODEL=qwen3-coder-plus QWEN_CODE_SUPPRESS_YOLO_WARNING=1 NO_COLOR=1 \
    timeout "$RUN_TIMEOUT" "${qwen[@]}" --auth-type openai --yolo "$@" \
    >>"$root/stdout" 2>>"$root/stderr" </dev/null) || { echo "qwen $* failed; stderr:" >&2; tail -20 "$root/stderr" >&2; exit 1; }
}

# finish: stop the fake and write the normalised fixture.
finish() {
  kill "$fake_pid"; wait "$fake_pid" 2>/dev/null || true; fake_pid=
  "$work/normalize" -root "$root" -out "$OUT/$name"
  echo "recorded $name: $(wc -l <"$OUT/$name/requests.jsonl") requests" >&2
}

scenario_chat() {
  start chat
  qw -p "Hello. Say hi."
  finish
}

scenario_tool() {
  start tool
  qw -p "List the files here. [[shell: ls -1]]"
  finish
}

# Several resumed turns with tool calls: enough recorded requests for the
# next-request accuracy check.
scenario_turns() {
  start turns
  qw -p "List the files here. [[shell: ls -1]]"
  qw -c -p "Read the notes. [[shell: cat notes.txt]]"
  qw -c -p "Count the lines. [[shell: wc -l notes.txt]]"
  qw -c -p "Thanks."
  finish
}

# The fake reports 900,000 input tokens ([[inflate]]) against the model's
# 1,000,000 window, so the client compresses automatically before its next
# request, in the middle of the turn (a pending call kept after the
# summary); one more resumed turn follows.
scenario_compression() {
  start compression
  qw -p "List the files here. [[shell: ls -1]] [[inflate]]"
  qw -c -p "Now read the notes. [[shell: cat notes.txt]]"
  finish
}

# /compress by hand between two turns.
scenario_compress() {
  start compress
  qw -p "First turn. [[shell: ls -1]]"
  qw -c -p "/compress"
  qw -c -p "After the compression."
  finish
}

# A sub-agent ([[spawn: …]] makes the fake call the "agent" tool): it runs
# in the background, its transcript under subagents/<session id>/, and its
# completion reaches the session as a notification the model answers.
scenario_subagent() {
  start subagent
  qw -p "Ask a helper. [[spawn: Count the files here.]]"
  finish
}

# --fork-session: the client copies the session's records (same uuids)
# into a new session file and continues there; the original stays.
scenario_fork() {
  start fork
  qw -p "List the files here. [[shell: ls -1]]"
  qw -c --fork-session -p "Forked turn."
  finish
}

scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(chat tool turns compression compress subagent fork)
for s in "${scenarios[@]}"; do
  "scenario_${s//-/_}"
done
