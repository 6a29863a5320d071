#!/usr/bin/env bash
# Builds .tools/bin/temporal-multishard: the pinned Temporal CLI whose dev server takes its number of
# history shards from TEMPORAL_DEV_HISTORY_SHARDS (the stock dev server hard-codes 1). Only the
# shard experiment in docs/performance.md uses it:
#   scripts/build-temporal-multishard.sh
#   TEMPORAL_CLI=.tools/bin/temporal-multishard TEMPORAL_DEV_HISTORY_SHARDS=4 npm run bench -- ...
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pinned="v1.5.1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

go mod download "github.com/temporalio/cli@$pinned"
src="$(go env GOMODCACHE)/github.com/temporalio/cli@$pinned"
cp -r "$src/." "$work/"
chmod -R u+w "$work"
server="$work/temporalcli/devserver/server.go"
grep -q 'conf.Persistence.NumHistoryShards = 1' "$server" || { echo "unexpected dev server source" >&2; exit 1; }
sed -i 's|^\(\t*\)conf.Persistence.NumHistoryShards = 1$|&\n\1if n, err := strconv.Atoi(os.Getenv("TEMPORAL_DEV_HISTORY_SHARDS")); err == nil \&\& n > 0 {\n\1\tconf.Persistence.NumHistoryShards = int32(n)\n\1}|' "$server"
mkdir -p "$root/.tools/bin"
(cd "$work" && go build -o "$root/.tools/bin/temporal-multishard" ./cmd/temporal)
echo "$root/.tools/bin/temporal-multishard"
