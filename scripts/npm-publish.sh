#!/usr/bin/env bash
# Assembles ctxfold's npm packages from the release binaries and publishes
# them (npm/README.md, docs/INSTALL.md): one package per platform,
# ctxfold-<platform>-<arch> with the binary under bin/ and npm's os/cpu
# fields, then the launcher package `ctxfold` naming them all as
# optionalDependencies at the same version. The npm token is the one the
# usual npmrc holds for the registry.
#
# Usage: scripts/npm-publish.sh --registry URL [--dist DIR] [--version V]
#                               [--out DIR] [--pack-only]
#   --dist DIR     GoReleaser's dist/ (ctxfold_<os>_<arch>*/ctxfold) or
#                  scripts/release-build.sh's folder (ctxfold_<os>_<arch>);
#                  default dist/ when it holds binaries, else a fresh
#                  scripts/release-build.sh build into dist-go/
#   --version V    the packages' version (default: GoReleaser's
#                  metadata.json, which `ctxfold version` prints too)
#   --out DIR      where the packages and tarballs go (default DIR/npm)
#   --tag T        the dist-tag (default latest; a prerelease version,
#                  such as a snapshot's, defaults to "snapshot": npm
#                  refuses to make a prerelease latest)
#   --pack-only    assemble and pack, publish nothing
# Writes OUT/SHA256SUMS: the sha256 of every packed binary.
set -euo pipefail
cd "$(dirname "$0")/.."

registry="" dist="" version="" out="" publish=1 tag=""
while [ $# -gt 0 ]; do
  case "$1" in
    --registry) registry=$2; shift 2 ;;
    --dist) dist=$2; shift 2 ;;
    --version) version=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --pack-only) publish=0; shift ;;
    *) echo "npm-publish: error: unknown argument $1 (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
done
if [ "$publish" = 1 ] && [ -z "$registry" ]; then
  echo "npm-publish: error: --registry URL is required (or --pack-only)" >&2; exit 2
fi

# binary_of OS ARCH: the release binary for one platform, in either layout.
binary_of() {
  local exe=ctxfold
  [ "$1" = windows ] && exe=ctxfold.exe
  local flat="$dist/ctxfold_$1_$2"
  [ "$1" = windows ] && flat="$flat.exe"
  if [ -f "$flat" ]; then echo "$flat"; return; fi
  local d
  for d in "$dist"/ctxfold_"$1"_"$2" "$dist"/ctxfold_"$1"_"$2"_*; do
    if [ -f "$d/$exe" ]; then echo "$d/$exe"; return; fi
  done
}

if [ -z "$dist" ]; then
  dist=dist
  if [ -z "$(binary_of linux amd64)" ]; then
    dist=dist-go
    scripts/release-build.sh "$dist" >&2
  fi
fi
if [ -z "$version" ]; then
  if [ -f "$dist/metadata.json" ]; then
    version=$(node -e 'process.stdout.write(require(process.argv[1]).version)' "$(cd "$dist" && pwd)/metadata.json")
  else
    echo "npm-publish: error: $dist has no metadata.json (a GoReleaser build): give --version V" >&2; exit 2
  fi
fi
if ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "npm-publish: error: version $version is not semver without build metadata (npm would drop a +…)" >&2; exit 2
fi
if [ -z "$tag" ]; then
  tag=latest
  [[ "$version" == *-* ]] && tag=snapshot
fi
out=${out:-$dist/npm}
rm -rf "$out"
mkdir -p "$out"

# Go's names → npm's (process.platform, process.arch).
declare -A npm_os=([linux]=linux [darwin]=darwin [windows]=win32)
declare -A npm_cpu=([amd64]=x64 [arm64]=arm64)
optional="" names=()
: >"$out/SHA256SUMS"
for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
  os=${target%/*} arch=${target#*/}
  bin=$(binary_of "$os" "$arch")
  if [ -z "$bin" ]; then
    echo "npm-publish: error: no $os/$arch binary in $dist" >&2; exit 1
  fi
  name="ctxfold-${npm_os[$os]}-${npm_cpu[$arch]}"
  names+=("$name")
  exe=ctxfold
  [ "$os" = windows ] && exe=ctxfold.exe
  mkdir -p "$out/$name/bin"
  cp "$bin" "$out/$name/bin/$exe"
  chmod 0755 "$out/$name/bin/$exe"
  cat >"$out/$name/package.json" <<JSON
{
  "name": "$name",
  "version": "$version",
  "description": "The ctxfold binary for ${npm_os[$os]} ${npm_cpu[$arch]} (installed by the ctxfold package)",
  "os": ["${npm_os[$os]}"],
  "cpu": ["${npm_cpu[$arch]}"],
  "files": ["bin/$exe"],
  "preferUnplugged": true
}
JSON
  (cd "$out/$name" && sha256sum "bin/$exe" | sed "s|bin/|$name/bin/|") >>"$out/SHA256SUMS"
  optional="$optional${optional:+,
}    \"$name\": \"$version\""
done

mkdir -p "$out/ctxfold/bin"
cp npm/ctxfold/bin/ctxfold.js "$out/ctxfold/bin/ctxfold.js"
chmod 0755 "$out/ctxfold/bin/ctxfold.js"
cp README.md "$out/ctxfold/README.md"
cat >"$out/ctxfold/package.json" <<JSON
{
  "name": "ctxfold",
  "version": "$version",
  "description": "Context occupancy, compaction that keeps facts, and recall for LLM agent transcripts (Claude Code, Codex, Gemini CLI and more)",
  "bin": { "ctxfold": "bin/ctxfold.js" },
  "files": ["bin/ctxfold.js", "README.md"],
  "engines": { "node": ">=18" },
  "optionalDependencies": {
$optional
  }
}
JSON

# Pack every package (the tarballs are what is published), then publish
# the platforms before the launcher that names them.
for name in "${names[@]}" ctxfold; do
  (cd "$out" && npm pack --silent "./$name" >/dev/null)
  [ -f "$out/$name-$version.tgz" ] || { echo "npm-publish: error: npm pack made no $name-$version.tgz" >&2; exit 1; }
done
if [ "$publish" = 1 ]; then
  for name in "${names[@]}" ctxfold; do
    echo "publishing $name@$version to $registry" >&2
    npm publish "$out/$name-$version.tgz" --registry "$registry" --access public --tag "$tag" >&2
  done
fi
echo "$version"
