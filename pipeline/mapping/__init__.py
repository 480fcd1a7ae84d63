"""The semantic mapper: candidate index, pure decision rules, and the mapper that applies them."""

from pipeline.mapping.decide import (
    COMPATIBLE_TYPES,
    Decision,
    Refinement,
    Thresholds,
    type_compat,
)
from pipeline.mapping.index import Candidate, ConceptIndex
from pipeline.mapping.mapper import MappingInput, MappingTally, SemanticMapper

__all__ = [
    "COMPATIBLE_TYPES",
    "Candidate",
    "ConceptIndex",
    "Decision",
    "MappingInput",
    "MappingTally",
    "Refinement",
    "SemanticMapper",
    "Thresholds",
    "type_compat",
]
