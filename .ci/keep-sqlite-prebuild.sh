#!/usr/bin/env bash
# Keeps the better-sqlite3 binary this checkout built as a prebuild-install local prebuild in $1,
# under the name prebuild-install looks for, so the machine's next CI run unpacks it instead of
# compiling SQLite (.ci/run). The binary is first loaded and used: a broken build is never kept.
set -euo pipefail
dir=$1
pkg=node_modules/better-sqlite3
version=$(node -p "require('./$pkg/package.json').version")
tarball="$dir/better-sqlite3-v$version-node-v$(node -p process.versions.modules)-$(node -p process.platform)-$(node -p process.arch).tar.gz"
[ -f "$tarball" ] && exit 0
node -e "const db = new (require('better-sqlite3'))(':memory:'); db.prepare('select 1').get(); db.close()"
mkdir -p "$dir"
tar czf "$tarball.$$" -C "$pkg" build/Release/better_sqlite3.node
mv "$tarball.$$" "$tarball"
