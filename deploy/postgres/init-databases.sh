#!/bin/sh
# docker-compose.yml's PostgreSQL, first start only (the image runs /docker-entrypoint-initdb.d/ on
# an empty data directory): one role per user of the server. `temporal` may CREATEDB because the
# temporal-schema service creates its two databases (temporal, temporal_visibility) itself;
# `switchyard` owns Switchyard's store, whose migrations run at API and worker start.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v temporal_password="$TEMPORAL_DB_PASSWORD" -v switchyard_password="$SWITCHYARD_DB_PASSWORD" <<'SQL'
CREATE ROLE temporal LOGIN CREATEDB PASSWORD :'temporal_password';
CREATE ROLE switchyard LOGIN PASSWORD :'switchyard_password';
CREATE DATABASE switchyard OWNER switchyard;
SQL
