#!/usr/bin/env bash
# `npm test`: every test file. Two Jest runs side by side:
# - the files of test/run-alone.txt, one after another, at normal priority. They measure a whole
#   production shape's CPU (Temporal's own server, PostgreSQL, two APIs and two workers) and fault
#   timings that files competing for the CPU would distort;
# - every other file, JEST_WORKERS at a time (default 3), under `nice`: they take only the CPU the
#   first run leaves idle (it uses well under one core), so the first runs as if alone while the
#   box stays busy, instead of the run-alone files taking two more minutes at the end.
# Extra arguments go to both Jest runs. The alone run's output is printed once the other ends, so
# the log reads one run at a time. A failed integration file's logs are printed again at the very
# end (test/jest/integration-environment.js), so the cause of a red run reads from the last lines.
set -uo pipefail
cd "$(dirname "$0")/.."
failures=.test-data/failures
rm -rf "$failures" .test-data/timings.json
mkdir -p .test-data
alone=$(grep -v '^#' test/run-alone.txt | grep -v '^$' | paste -sd'|')
# Both runs' global setups start Temporal: the pinned CLI and server are built once, here, not by
# both at once into the same .tools/.
bash scripts/temporal-dev.sh ensure >/dev/null || exit 1
bash scripts/temporal-server.sh ensure >/dev/null || exit 1
alone_log=.test-data/run-alone.log
SWITCHYARD_TIMINGS_APPEND=1 JEST_WORKERS=1 npx jest --selectProjects integration --testPathPatterns "$alone" "$@" >"$alone_log" 2>&1 &
alone_pid=$!
SWITCHYARD_TIMINGS_APPEND=1 nice -n 10 npx jest --testPathIgnorePatterns "$alone" "$@"
shared=$?
wait "$alone_pid"
solo=$?
echo "=== the files that run alone (test/run-alone.txt), beside the others ==="
cat "$alone_log"
if compgen -G "$failures/*.log" >/dev/null; then
  echo "=== logs of every failed integration file, again ==="
  cat "$failures"/*.log
fi
exit $(( shared != 0 ? shared : solo ))
