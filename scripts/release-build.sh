#!/usr/bin/env bash
# Builds ctxfold for linux, darwin and windows (amd64 and arm64) with go
# build alone, as .goreleaser.yaml does (CGO off, -trimpath, -s -w), into
# ${1:-dist-go}/ with a checksums.txt (sha256) — for a machine without
# GoReleaser. Usage: scripts/release-build.sh [OUTDIR [VERSION]]: VERSION
# is what `ctxfold version` prints (the release's, as GoReleaser sets it).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dist-go}
ldflags="-s -w"
[ -n "${2:-}" ] && ldflags="$ldflags -X github.com/ctxfold/ctxfold/cmd.releaseVersion=$2"
rm -rf "$out"
mkdir -p "$out"
for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
  os=${target%/*} arch=${target#*/}
  ext=""
  [ "$os" = windows ] && ext=.exe
  name="ctxfold_${os}_${arch}${ext}"
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -ldflags "$ldflags" -o "$out/$name" .
  echo "built $out/$name"
done
(cd "$out" && sha256sum ctxfold_* > checksums.txt && sha256sum -c --quiet checksums.txt)
echo "checksums: $out/checksums.txt"
