#!/usr/bin/env bash
# `npm run format`: Prettier over the TypeScript/JavaScript files this branch *added* since it left
# main (`npm run format -- <files>` formats the files named instead). Existing files keep their
# layout until someone formats them on purpose, in a change of their own: a repo-wide or
# on-touch reformat would make every other open branch unmergeable. Markdown is left as written
# (.prettierignore). Lint, not format, is what CI checks.
set -euo pipefail
cd "$(dirname "$0")/.."
if (($# > 0)); then exec npx prettier --write --ignore-unknown "$@"; fi
base="$(git merge-base main HEAD)"
mapfile -t files < <({ git diff --name-only --diff-filter=A "$base" -- '*.ts' '*.mjs' '*.js'; git ls-files --others --exclude-standard -- '*.ts' '*.mjs' '*.js'; } | sort -u)
if ((${#files[@]} == 0)); then echo 'format: no new files'; exit 0; fi
exec npx prettier --write --ignore-unknown "${files[@]}"
