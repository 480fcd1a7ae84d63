#!/usr/bin/env bash
# The main job on the bundled sample: ingest -> extract -> sync -> garden, offline, no server.
set -euo pipefail
cd "$(dirname "$0")/.."
STORE="${STORE:-demo-store}"
.venv/bin/conceptmem --store "$STORE" run data/sample/*.json
.venv/bin/conceptmem --store "$STORE" stats
