#!/usr/bin/env bash
# `npm test`: every test file, JEST_WORKERS at a time (default 3), then the files of
# test/run-alone.txt one after another with nothing beside them: they measure a whole production
# shape's CPU (Temporal's own server, PostgreSQL, two APIs and two workers) and fault timings that
# files running beside them would distort. Extra arguments go to both Jest runs.
# A failed integration file's logs are printed again at the very end (test/jest/integration-environment.js),
# so the cause of a red run reads from the last lines of its output.
set -uo pipefail
cd "$(dirname "$0")/.."
failures=.test-data/failures
rm -rf "$failures"
alone=$(grep -v '^#' test/run-alone.txt | grep -v '^$' | paste -sd'|')
npx jest --testPathIgnorePatterns "$alone" "$@"
shared=$?
# They start their own Temporal server and PostgreSQL, so the run's shared ones are not started
# (test/helpers/global-setup.ts OWN_SERVICES_ENV).
SWITCHYARD_TEST_OWN_SERVICES=1 SWITCHYARD_TIMINGS_APPEND=1 JEST_WORKERS=1 npx jest --selectProjects integration --testPathPatterns "$alone" "$@"
solo=$?
if compgen -G "$failures/*.log" >/dev/null; then
  echo "=== logs of every failed integration file, again ==="
  cat "$failures"/*.log
fi
exit $(( shared != 0 ? shared : solo ))
