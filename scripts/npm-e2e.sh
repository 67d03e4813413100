#!/usr/bin/env bash
# The npm install path end to end (issue 38, docs/INSTALL.md): a real npm
# registry (Verdaccio 5, from npm, no uplinks) on 127.0.0.1, ctxfold's
# packages published to it by scripts/npm-publish.sh, then, from a clean
# HOME and npm cache, what a user runs:
#   npx -y ctxfold@V version            prints V
#   npx -y ctxfold@V setup claude-code  writes settings whose hook and
#                                        status-line commands still run once
#                                        the npx cache is deleted
#   npm install -g --prefix P ctxfold@V  gives a working P/bin/ctxfold whose
#                                        binary is the one packed (SHA256SUMS)
# Usage: scripts/npm-e2e.sh DIST  (GoReleaser's dist/ or release-build.sh's
# folder; its metadata.json, or CTXFOLD_NPM_VERSION, gives the version).
# CTXFOLD_NPM_PREFIX keeps the global install (P above) for later tests:
# .ci/run runs the real Claude Code's hooks through it.
# Verdaccio is installed under ${CTXFOLD_VERDACCIO_DIR:-~/.cache/ctxfold-verdaccio}.
set -euo pipefail
cd "$(dirname "$0")/.."
dist=${1:?usage: scripts/npm-e2e.sh DIST}
VERDACCIO_VERSION=5.33.0
vdir=${CTXFOLD_VERDACCIO_DIR:-$HOME/.cache/ctxfold-verdaccio}
if [ ! -x "$vdir/node_modules/.bin/verdaccio" ]; then
  npm install --prefix "$vdir" --no-audit --no-fund --silent "verdaccio@$VERDACCIO_VERSION" >/dev/null
fi

work=$(mktemp -d)
vpid=""
cleanup() { [ -n "$vpid" ] && kill "$vpid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "npm-e2e: FAIL: $*" >&2; exit 1; }
# once_more runs a step that fetches from the registry again after a
# failure, saying so: a fresh npm cache fetching from a registry that has
# just started is the one thing here that may fail by chance.
once_more() { "$@" || { echo "npm-e2e: '$*' failed; once more" >&2; sleep 1; "$@"; }; }

port=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
registry="http://127.0.0.1:$port/"
mkdir -p "$work/storage"
cat >"$work/config.yaml" <<YAML
storage: $work/storage
auth:
  htpasswd:
    file: $work/htpasswd
    max_users: 10
uplinks: {}
max_body_size: 200mb
packages:
  '**':
    access: \$all
    publish: \$authenticated
log: { type: stdout, format: pretty, level: warn }
YAML
"$vdir/node_modules/.bin/verdaccio" --config "$work/config.yaml" --listen "127.0.0.1:$port" >"$work/verdaccio.log" 2>&1 &
vpid=$!
for _ in $(seq 1 100); do
  curl -sf "$registry-/ping" >/dev/null 2>&1 && break
  kill -0 "$vpid" 2>/dev/null || { cat "$work/verdaccio.log"; fail "verdaccio did not start"; }
  sleep 0.2
done
curl -sf "$registry-/ping" >/dev/null || fail "verdaccio does not answer on $registry"

# A publisher: a user on the registry and its token in an npmrc, the
# usual place npm publish reads it from.
token=$(curl -sf -X PUT -H 'content-type: application/json' \
  -d '{"name":"ci","password":"ci-password-1"}' "$registry-/user/org.couchdb.user:ci" |
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(JSON.parse(s).token))')
[ -n "$token" ] || fail "no token from verdaccio"
export NPM_CONFIG_USERCONFIG="$work/publisher.npmrc"
echo "//127.0.0.1:$port/:_authToken=$token" >"$NPM_CONFIG_USERCONFIG"
export NPM_CONFIG_CACHE="$work/publisher-cache"
version_args=()
[ -n "${CTXFOLD_NPM_VERSION:-}" ] && version_args=(--version "$CTXFOLD_NPM_VERSION")
version=$(scripts/npm-publish.sh --registry "$registry" --dist "$dist" --out "$work/packages" "${version_args[@]}" | tail -1)
echo "published ctxfold@$version to $registry"

# A user: a clean HOME and npm cache, the registry as the only source.
user=$work/user
mkdir -p "$user/home"
export HOME=$user/home NPM_CONFIG_CACHE=$user/npm-cache NPM_CONFIG_USERCONFIG=$user/npmrc
export NPM_CONFIG_REGISTRY=$registry NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false
: >"$NPM_CONFIG_USERCONFIG"
unset XDG_CACHE_HOME XDG_CONFIG_HOME XDG_DATA_HOME CLAUDE_CONFIG_DIR

got=$(once_more npx -y "ctxfold@$version" version 2>"$work/npx.err") || { cat "$work/npx.err" >&2; fail "npx -y ctxfold@$version version"; }
got=$(head -1 <<<"$got")
[ "$got" = "ctxfold $version" ] || fail "npx ctxfold@$version version printed '$got'"
echo "ok: npx -y ctxfold@$version version"

once_more npx -y "ctxfold@$version" setup claude-code >"$work/setup.out" 2>"$work/setup.err" ||
  { cat "$work/setup.out" "$work/setup.err"; fail "npx ctxfold setup claude-code"; }
settings=$HOME/.claude/settings.json
[ -f "$settings" ] || fail "setup wrote no $settings"
rm -rf "$NPM_CONFIG_CACHE/_npx"
# Every command setup wrote must run without the npx cache, node or npm.
commands=$(node -e '
const s = require(process.argv[1]); const out = [];
if (s.statusLine) out.push(s.statusLine.command);
for (const groups of Object.values(s.hooks || {})) for (const g of groups) for (const h of g.hooks || []) out.push(h.command);
console.log(out.join("\n"))' "$settings")
[ -n "$commands" ] || fail "no commands in $settings"
while IFS= read -r c; do
  case "$c" in *_npx*|*npx\ *) fail "setup wrote a command through npx: $c" ;; esac
  exe=${c%% *}
  [ -x "$exe" ] || fail "setup's command $c: $exe is not an executable file"
  "$exe" version >/dev/null || fail "'$exe version' failed after the npx cache was deleted"
done <<<"$commands"
sl=$(node -e 'console.log(require(process.argv[1]).statusLine.command)' "$settings")
echo '{"session_id":"s","transcript_path":"/nonexistent.jsonl","cwd":"/","model":{"id":"claude-sonnet-4-5"}}' |
  PATH=/usr/bin:/bin sh -c "$sl" >/dev/null || fail "the status line command failed after the npx cache was deleted"
echo "ok: setup from npx wrote commands that run without it ($(head -1 <<<"$commands"))"

prefix=${CTXFOLD_NPM_PREFIX:-$work/global}
once_more npm install -g --prefix "$prefix" "ctxfold@$version" >"$work/install.log" 2>&1 || { cat "$work/install.log" >&2; fail "npm install -g ctxfold@$version"; }
# The whole output first, then its first line: "| head -1" may close the
# pipe before ctxfold has written its second line, and the SIGPIPE fails
# the pipeline (pipefail) without a word.
got=$("$prefix/bin/ctxfold" version)
got=$(head -1 <<<"$got")
[ "$got" = "ctxfold $version" ] || fail "$prefix/bin/ctxfold version printed '$got'"
installed=$(find "$prefix" -path '*ctxfold-linux-*/bin/ctxfold' -type f -print -quit)
[ -n "$installed" ] || fail "no platform binary under $prefix"
want=$(grep "ctxfold-linux-$(node -p process.arch)/bin/ctxfold\$" "$work/packages/SHA256SUMS" | cut -d' ' -f1)
have=$(sha256sum "$installed" | cut -d' ' -f1)
[ -n "$want" ] && [ "$want" = "$have" ] || fail "installed binary sha256 $have, packed $want"
echo "ok: npm install -g --prefix P ctxfold@$version: P/bin/ctxfold runs, binary sha256 $have as packed"
echo "npm-e2e: passed"
