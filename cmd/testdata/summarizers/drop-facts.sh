#!/bin/sh
# A summarizer that drops facts: it reads the prompt and answers with a
# two-line summary that names none of the errors, commands or paths
# (docs/COMPACT.md §3: compact appends what it lacks as a fact ledger).
cat >/dev/null
printf '## Objective\nFix the failing duration test.\n\n## Current state and plan\nFixed; the tests pass.\n'
