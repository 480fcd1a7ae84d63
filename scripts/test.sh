#!/usr/bin/env bash
# Set up, start a local Neo4j when Java and Maven are here, run lint, types and tests.
# Without Java/Maven the Neo4j tests skip with a visible reason; with CI=true they must run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

started_neo4j=0
cleanup() {
  if [ "$started_neo4j" = 1 ]; then bash .ci/neo4j.sh stop || true; fi
}
trap cleanup EXIT

if command -v java >/dev/null && command -v mvn >/dev/null; then
  if ! bash .ci/neo4j.sh status >/dev/null 2>&1; then
    if bash .ci/neo4j.sh start; then
      started_neo4j=1
    elif [ "${CI:-}" = "true" ]; then
      echo "Neo4j failed to start and CI=true: failing." >&2
      exit 1
    fi
  fi
  export NEO4J_URI="${NEO4J_URI:-bolt://127.0.0.1:${NEO4J_PORT:-7687}}"
elif [ "${CI:-}" = "true" ]; then
  echo "CI=true but Java/Maven are missing: Neo4j tests cannot run." >&2
  exit 1
else
  echo "NOTE: Java/Maven not found: Neo4j tests will be skipped." >&2
fi

export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$HOME/.cache/conceptmem/numba}"
.venv/bin/ruff check .
.venv/bin/mypy
if [ "${CI:-}" = "true" ]; then bash .ci/fresh_install.sh; fi  # pip install . in a fresh venv, run the sample
.venv/bin/python -m pytest --timeout=900 "$@"
bash .ci/notebooks.sh  # executes notebooks/*.ipynb on the bundled sample; a failing cell fails
