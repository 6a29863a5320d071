#!/usr/bin/env bash
# The tuning experiments of docs/performance.md: one bench run per setting, N=1000, bare Temporal
# beside Switchyard on a fresh dev server each, results in bench/results/experiments/<date>-<label>.json.
#   bench/experiments.sh              every experiment (about 35 minutes on 2 cores)
#   bench/experiments.sh shards       only those whose label starts with "shards"
# Then `npx tsx bench/experiments-table.ts` prints the table the doc quotes.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
only="${1:-}"
out=bench/results/experiments

run() {
  local label="$1"; shift
  [[ -n "$only" && "$label" != "$only"* ]] && return 0
  echo "== $(date -u +%H:%M:%S) $label: $*  [$(uptime | sed 's/.*load/load/')]"
  mkdir -p "$out"
  env "$@" --out-dir "$out" --label "$label" 2>&1 | tee "$out/$label.log" | grep -E "#1  [0-9]+/|Switchyard =|NOT EVERY|rror" || true
}
bench=(npm run bench -- -n 1000 --warmup 300)
both=("${bench[@]}" --systems bare,switchyard)

# Where a message's Temporal work goes.
run combined-eager         "${both[@]}" --combined
run combined-not-eager     INGEST_EAGER_START=false "${both[@]}" --combined
run first-attempt-local    DELIVERY_FIRST_ATTEMPT_LOCAL=true  "${both[@]}"
run first-attempt-activity DELIVERY_FIRST_ATTEMPT_LOCAL=false "${both[@]}"
# The dev server's default is off, as in first-attempt-local.
run eager-activity-on      "${both[@]}" --temporal-flags '--dynamic-config-value system.enableActivityEagerExecution=true'
# The dev server's persistence: the journal mode decides the fsyncs per commit.
run journal-delete-full    "${both[@]}" --temporal-flags '--sqlite-pragma journal_mode=delete --sqlite-pragma synchronous=full'
# journal_mode=wal with synchronous=full is scripts/temporal-dev.sh's default: first-attempt-local.
run journal-wal-normal     "${both[@]}" --temporal-flags '--sqlite-pragma synchronous=normal'
# History shards (needs scripts/build-temporal-multishard.sh).
if [ -x .tools/bin/temporal-multishard ]; then
  run shards-1 TEMPORAL_CLI=.tools/bin/temporal-multishard TEMPORAL_DEV_HISTORY_SHARDS=1 "${both[@]}"
  run shards-4 TEMPORAL_CLI=.tools/bin/temporal-multishard TEMPORAL_DEV_HISTORY_SHARDS=4 "${both[@]}"
fi
# Worker slots (workflow tasks; activities and local activities).
run wft-slots-400          WORKER_MAX_CONCURRENT_WORKFLOW_TASKS=400 "${both[@]}"
run activity-slots-20      WORKER_MAX_CONCURRENT_ACTIVITIES=20      "${both[@]}"
# How the API fans out one batch's workflow starts.
run fanout-8               "${bench[@]}" --systems switchyard --fanout 8
run fanout-128             "${bench[@]}" --systems switchyard --fanout 128
# The per-webhook in-flight cap with every message going to one webhook.
run per-webhook-cap-20     WORKER_MAX_IN_FLIGHT_PER_WEBHOOK=20 "${bench[@]}" --systems switchyard
# Where the CPU goes (V8 profiles of the API and worker, top functions printed).
run profile                "${bench[@]}" --systems switchyard --profile
echo "== DONE $(date -u +%H:%M:%S)"
