"""Graph projection of the stores: one protocol, an embedded engine and Neo4j."""

from graph.errors import GraphError, GraphUnavailable
from graph.factory import BACKENDS, GraphSettings, open_graph
from graph.model import (
    EDGE_TYPES,
    NODE_LABELS,
    SCHEMA,
    AsOfConcept,
    AsOfRelation,
    AsOfState,
    ConceptHistory,
    ConceptRef,
    EvidenceRow,
    Row,
    WindowMessage,
)
from graph.protocol import GraphExport, GraphStore

__all__ = [
    "BACKENDS",
    "EDGE_TYPES",
    "NODE_LABELS",
    "SCHEMA",
    "AsOfConcept",
    "AsOfRelation",
    "AsOfState",
    "ConceptHistory",
    "ConceptRef",
    "EvidenceRow",
    "GraphError",
    "GraphExport",
    "GraphSettings",
    "GraphStore",
    "GraphUnavailable",
    "Row",
    "WindowMessage",
    "open_graph",
]
