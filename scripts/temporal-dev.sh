#!/usr/bin/env bash
# Starts a real Temporal dev server (SQLite persistence, Web UI) with Switchyard's search attributes.
#   scripts/temporal-dev.sh ensure        build the pinned CLI if needed and print its path
#   scripts/temporal-dev.sh [start-dev flags]   exec `temporal server start-dev` with those flags
# Uses `temporal` from PATH when present; otherwise builds v1.5.1 once into .tools/bin
# (later tags carry a `replace` directive that `go install` refuses).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pinned="v1.5.1"

find_cli() {
  if [ -n "${TEMPORAL_CLI:-}" ] && [ -x "$TEMPORAL_CLI" ]; then echo "$TEMPORAL_CLI"; return; fi
  if command -v temporal >/dev/null 2>&1; then command -v temporal; return; fi
  local built="$root/.tools/bin/temporal"
  if [ ! -x "$built" ]; then
    command -v go >/dev/null 2>&1 || { echo "temporal-dev: no 'temporal' on PATH and no Go toolchain to build it" >&2; exit 1; }
    echo "temporal-dev: building the Temporal CLI $pinned into .tools/bin (once; a few minutes)..." >&2
    mkdir -p "$root/.tools/bin"
    GOBIN="$root/.tools/bin" go install "github.com/temporalio/cli/cmd/temporal@$pinned" >&2
  fi
  echo "$built"
}

cli="$(find_cli)"
if [ "${1:-}" = "ensure" ]; then echo "$cli"; exit 0; fi

# Search attributes: keep in step with src/workflows/search-attributes.ts (a unit test checks).
# SQLite in WAL mode: one fsync per commit instead of the rollback journal's several, measured at
# about twice the workflows per second (docs/performance.md); synchronous=full keeps every
# acknowledged start on disk across a power loss. Later flags (e.g. synchronous=normal) win.
# Task queue fairness (server >= 1.29; this CLI embeds 1.29.1): delivery workflows carry their
# source, slow-lane attempts their destination, as fairness key (docs/reliability.md, no noisy neighbours).
exec "$cli" server start-dev \
  --dynamic-config-value matching.enableFairness=true \
  --search-attribute SwitchyardSource=Keyword \
  --search-attribute SwitchyardDestinations=KeywordList \
  --search-attribute SwitchyardType=Keyword \
  --search-attribute SwitchyardUserId=Keyword \
  --search-attribute SwitchyardStatus=Keyword \
  --search-attribute SwitchyardAnonymousId=Keyword \
  --search-attribute SwitchyardOutcomes=KeywordList \
  --sqlite-pragma journal_mode=wal \
  --sqlite-pragma synchronous=full \
  "$@"
