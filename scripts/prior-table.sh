#!/usr/bin/env bash
# scripts/prior-table.sh — regenerates estimate/prior_table.go, the prior
# of docs/ACCURACY.md ("The prior"), from the request bodies the real-client
# recordings hold (testdata/interop/<client>/<version>/<scenario>), and
# prints its Markdown table (paste it between the prior-table markers).
# TestPriorTable fails when the committed table is not what they give.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
md=$(mktemp); trap 'rm -f "$md"' EXIT
cd "$repo/estimate"
CTXFOLD_PRIOR_WRITE=1 CTXFOLD_PRIOR_MD="$md" go test -count=1 -run '^TestPriorTable$' . >&2
gofmt -w prior_table.go
cat "$md"
