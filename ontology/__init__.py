"""Pure types of conceptmem: no I/O, no environment reads, nothing done at import."""

from ontology.concepts import (
    CONCEPT_STATES,
    CONCEPT_TYPES,
    RELATION_TYPES,
    ConceptHypothesis,
    ConceptRelation,
    ConceptState,
    ConceptType,
    EvidenceSpan,
    RelationType,
)
from ontology.extraction import (
    ExtractionRequest,
    ExtractionResult,
    RawMention,
    RawRelation,
    SegmentMessage,
)
from ontology.ids import normalize_name, stable_id, text_hash
from ontology.protocols import Embedder, Extractor
from ontology.records import (
    ContentPart,
    Conversation,
    ImportFormat,
    Message,
    Role,
    Source,
    ensure_utc,
)
from ontology.strict import (
    StrictBase,
    StrictSchemaError,
    check_strict_schema,
    schema_hash,
    strict_json_schema,
)

__all__ = [
    "CONCEPT_STATES",
    "CONCEPT_TYPES",
    "RELATION_TYPES",
    "ConceptHypothesis",
    "ConceptRelation",
    "ConceptState",
    "ConceptType",
    "ContentPart",
    "Conversation",
    "Embedder",
    "EvidenceSpan",
    "ExtractionRequest",
    "ExtractionResult",
    "Extractor",
    "ImportFormat",
    "Message",
    "RawMention",
    "RawRelation",
    "RelationType",
    "Role",
    "SegmentMessage",
    "Source",
    "StrictBase",
    "StrictSchemaError",
    "check_strict_schema",
    "ensure_utc",
    "normalize_name",
    "schema_hash",
    "stable_id",
    "strict_json_schema",
    "text_hash",
]
