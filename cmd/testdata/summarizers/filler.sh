#!/bin/sh
# A summarizer whose summary fills the whole ceiling with prose and keeps
# no fact: no room is left for a ledger, so it cannot be repaired.
cat >/dev/null
printf '## Objective\nFix the failing duration test.\n\n## Current state and plan\n'
i=0
while [ $i -lt 27 ]; do
  printf 'The work went on and the agent kept going. '
  i=$((i+1))
done
printf '\n'
