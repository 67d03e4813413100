#!/usr/bin/env bash
# scripts/accuracy-loo.sh — the leave-one-out table of docs/ACCURACY.md
# ("Leave one session out", issue 41): every recorded request of every
# shared real transcript (../shared/fixtures/external, read in place, or
# $CTXFOLD_SHARED_DIR/fixtures/external) and every real-client recording
# (testdata/interop), predicted with a calibration that never saw the
# session. Prints the Markdown table; the test behind it
# (TestAccuracyLeaveOneOut) asserts the targets on the same figures.
# CTXFOLD_ACCURACY_HELDOUT=DIR adds the transcripts under DIR as held-out
# rows (docs/ACCURACY.md, "Held-out real transcripts").
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp); trap 'rm -f "$out"' EXIT
cd "$repo"
CTXFOLD_LONG=1 CTXFOLD_ACCURACY_LOO_TABLE="$out" go test -count=1 -run '^TestAccuracyLeaveOneOut$' . >&2
cat "$out"
