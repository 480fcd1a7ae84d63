#!/usr/bin/env bash
# The main job on the bundled sample, offline and with no server:
# ingest -> extract -> garden -> sync, then a Cypher query and one concept's lineage.
set -euo pipefail
cd "$(dirname "$0")/.."
STORE="${STORE:-demo-store}"
cm() { .venv/bin/conceptmem --store "$STORE" "$@"; }

cm run data/sample/*_conversations.json
cm stats

top_concepts='MATCH (m:Message)-[e:EVIDENCE_FOR]->(c:Concept) WHERE c.state = $state
RETURN c.id AS concept, c.title AS title, c.concept_type AS type, count(e) AS evidence
ORDER BY evidence DESC, title LIMIT $n'
echo
echo "== The most-supported active concepts (Cypher over the embedded graph) =="
cm cypher "$top_concepts" --param state=active --param n=5
top=$(cm cypher "$top_concepts" --param state=active --param n=1 --json \
  | .venv/bin/python -c 'import json, sys; print(json.load(sys.stdin)[0]["concept"])')
echo
echo "== Lineage of $top: the exact messages behind it =="
cm lineage concept "$top"
echo
echo "Store: $STORE (source.db, staging.db, graph.lbug). Try: conceptmem --store $STORE lineage --help"
