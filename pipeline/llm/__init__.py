"""The LLM path: a validated structured-output client, the extraction prompt, cost and batch.

Library API used by the extract stage::

    log = LLMCallLog(staging, run)
    client = StructuredClient(settings, log)
    extractor = LLMExtractor(client, settings.llm_model)   # an ontology.Extractor
    result = extractor.extract(request)                     # ExtractionResult, validated
    extractor.last_call_id                                  # llm_calls row, this thread
    extractor.structured_output                             # ladder step (see ladder.py)
"""

from pipeline.llm.batch import read_batch_output, write_batch_input
from pipeline.llm.client import Completed, StructuredClient, build_chat_body
from pipeline.llm.cost import CostEstimate, estimate_extraction_cost
from pipeline.llm.errors import (
    BatchFileError,
    ExtractionFailed,
    LLMEndpointError,
    LLMError,
    NothingExtracted,
    StructuredOutputUnsupported,
    hint_for,
)
from pipeline.llm.extractor import LLMExtractor
from pipeline.llm.ladder import STEPS, Ladder
from pipeline.llm.prompts import SYSTEM_PROMPT, parse_data_block, render_extraction_messages
from pipeline.llm.tokens import count_message_tokens, count_tokens
from pipeline.llm.validate import INVALID_CLASSES, validate_reply
from staging.llm_log import (
    Capability,
    LLMCallLog,
    LLMCallRecord,
    llm_call_counts,
    llm_capabilities,
)

__all__ = [
    "INVALID_CLASSES",
    "STEPS",
    "SYSTEM_PROMPT",
    "BatchFileError",
    "Capability",
    "Completed",
    "CostEstimate",
    "ExtractionFailed",
    "LLMCallLog",
    "LLMCallRecord",
    "LLMEndpointError",
    "LLMError",
    "LLMExtractor",
    "Ladder",
    "NothingExtracted",
    "StructuredClient",
    "StructuredOutputUnsupported",
    "build_chat_body",
    "count_message_tokens",
    "count_tokens",
    "estimate_extraction_cost",
    "hint_for",
    "llm_call_counts",
    "llm_capabilities",
    "parse_data_block",
    "read_batch_output",
    "render_extraction_messages",
    "validate_reply",
    "write_batch_input",
]
