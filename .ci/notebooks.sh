#!/usr/bin/env bash
# Execute every notebook under notebooks/ on a store built from the bundled sample (offline
# extractor, embedded graph). A cell that raises fails this script, and so the CI run.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
if ! "$PY" -c "import nbclient, nbformat, ipykernel, matplotlib" 2>/dev/null; then
  "$PY" -m pip install --quiet -e '.[notebooks]'
fi
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$HOME/.cache/conceptmem/numba}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$PY" -m pipeline --store "$work/store" run --offline data/sample/*.json >"$work/run.log" 2>&1 \
  || { cat "$work/run.log" >&2; exit 1; }
CONCEPTMEM_STORE="$work/store" MPLBACKEND=Agg "$PY" - notebooks/*.ipynb <<'PY'
import sys

import nbformat
from nbclient import NotebookClient

for path in sys.argv[1:]:
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=900, kernel_name="python3").execute()
    print(f"notebook ok: {path} ({len(notebook.cells)} cells)")
PY
