#!/bin/sh
# summary-vs-client.sh: ctxfold's default compaction against a client's own
# (docs/COMPACT.md §7, "Against the client's summary"). For each real
# transcript with a client compaction (compact/versus_test.go), cut before
# the client's compaction, compact with ctxfold's defaults, and print the
# share of the client summary's salient items (audit.Salient) present in
# what the model reads after ctxfold's compaction, and the reverse.
# Needs the shared real transcripts (CTXFOLD_SHARED_DIR, default ../shared).
set -eu
cd "$(dirname "$0")/.."
CTXFOLD_LONG=1 go test ./compact -run 'TestSummaryVsClient' -count=1 -v "$@" |
	grep -E 'versus_test.go|^(---|ok|FAIL|PASS)' | sed 's/^ *versus_test.go:[0-9]*: /  /'
