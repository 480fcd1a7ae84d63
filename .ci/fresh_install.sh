#!/usr/bin/env bash
# What a new user does: `pip install .` (no extras) into a fresh venv, then the demo's `run` on
# the bundled sample, offline, then verify and one Cypher query on the embedded graph.
# Needs nothing but PyPI (pip's cache is used: PIP_CACHE_DIR, default ~/.cache/pip).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
work="$(mktemp -d "${TMPDIR:-/tmp}/conceptmem-fresh.XXXXXX")"
trap 'rm -rf "$work"' EXIT

"$PYTHON" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$repo"

cd "$work"  # outside the checkout: the installed package runs, not the source tree
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$HOME/.cache/conceptmem/numba}"
unset CONCEPTMEM_STORE CONCEPTMEM_LLM_BASE_URL CONCEPTMEM_LLM_API_KEY OPENAI_BASE_URL OPENAI_API_KEY
cm() { "$work/venv/bin/conceptmem" --store "$work/store" "$@"; }
cm run "$repo"/data/sample/*_conversations.json
cm verify
n=$(cm cypher 'MATCH (c:Concept) RETURN count(c) AS n' --json \
  | "$work/venv/bin/python" -c 'import json, sys; print(json.load(sys.stdin)[0]["n"])')
if [ "$n" -lt 1 ]; then
  echo "fresh install: run produced no concepts" >&2
  exit 1
fi
echo "fresh install OK: pip install . then run on the bundled sample -> $n concepts, verify in sync"
