"""The structured-output ladder against scripted servers that refuse formats like real ones do."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import pytest
from llm_server import (
    LLAMA_CPP_PYTHON,
    ScriptedLLMServer,
    error_reply,
    format_variant,
    json_reply,
    mention,
    sample_request,
)

from ontology import ExtractionResult, strict_json_schema
from pipeline.llm import (
    STEPS,
    ExtractionFailed,
    LLMCallLog,
    LLMExtractor,
    StructuredClient,
    StructuredOutputUnsupported,
    llm_capabilities,
    parse_data_block,
    render_extraction_messages,
)
from pipeline.llm.ladder import grammar_schema, refuses_format
from pipeline.settings import Settings
from staging import StagingStore

GOOD = {"mentions": [mention("Vegetable garden", "build a vegetable garden")]}


@pytest.fixture
def staging(llm_settings: Settings) -> Iterator[StagingStore]:
    store = StagingStore.open(llm_settings.staging_db)
    yield store
    store.close()


def _client(settings: Settings, staging: StagingStore, sleeps: list[float]) -> StructuredClient:
    run = staging.start_run("extract", {}, "test", "user-a", "assistant-a")
    return StructuredClient(settings, LLMCallLog(staging, run), sleep=sleeps.append)


@contextmanager
def _served(settings: Settings, formats: frozenset[str]) -> Iterator[tuple[ScriptedLLMServer,
                                                                           Settings]]:
    with ScriptedLLMServer(formats=formats) as server:
        yield server, settings.model_copy(update={"llm_base_url": server.base_url})


@pytest.fixture
def llama_like(llm_settings: Settings) -> Iterator[tuple[ScriptedLLMServer, Settings]]:
    with _served(llm_settings, LLAMA_CPP_PYTHON) as served:
        yield served


def complete(client: StructuredClient, segment_id: str = "seg_1") -> ExtractionResult:
    return client.complete(ExtractionResult, render_extraction_messages(sample_request(segment_id)),
                           segment_id)


def calls(staging: StagingStore) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in staging.db.execute(
        "SELECT status, error_class, structured_output FROM llm_calls ORDER BY written_at"
    ).fetchall()]


def test_json_schema_refused_with_a_500_steps_down_once_and_is_remembered(
    llama_like: tuple[ScriptedLLMServer, Settings], staging: StagingStore
) -> None:
    server, settings = llama_like
    server.script(json_reply(GOOD))
    sleeps: list[float] = []
    result = complete(_client(settings, staging, sleeps))
    assert result.mentions[0].quote == "build a vegetable garden"
    assert sleeps == []  # a refused format is not a transient error: no backoff
    assert [format_variant(body) for body in server.requests] == ["json_schema",
                                                                  "json_object_schema"]
    sent = server.requests[1]
    assert sent["response_format"]["schema"] == grammar_schema(
        strict_json_schema(ExtractionResult), settings.llm_grammar_max_items)
    assert sent["max_tokens"] == settings.llm_max_completion_tokens
    assert calls(staging) == [("error", "unsupported_format", "json_schema"),
                              ("ok", None, "json_object_schema")]
    [cap] = llm_capabilities(staging)
    assert (cap.base_url_host, cap.model) == (server.base_url.split("/")[2], settings.llm_model)
    assert cap.step == "json_object_schema" and cap.confirmed
    assert cap.detail and "Input should be 'text' or 'json_object'" in cap.detail
    # A new client (a later run) starts on the remembered step: one request, no refusal.
    complete(_client(settings, staging, sleeps), "seg_2")
    assert [format_variant(body) for body in server.requests[2:]] == ["json_object_schema"]


def test_json_mode_only_gets_the_schema_with_the_instructions(
    llm_settings: Settings, staging: StagingStore
) -> None:
    with _served(llm_settings, frozenset({"json_object", "text"})) as (server, settings):
        server.script(json_reply(GOOD))
        complete(_client(settings, staging, []))
        variants = [format_variant(body) for body in server.requests]
        assert variants == ["json_schema", "json_object_schema", "json_object"]
        first, second, last = server.requests
        schema = json.dumps(strict_json_schema(ExtractionResult), separators=(",", ":"))
        system, data = (m["content"] for m in first["messages"])
        assert [m["role"] for m in first["messages"]] == ["system", "user"]
        # Below step 1 the instructions lead the user turn (templates without a system role).
        assert second["messages"] == [{"role": "user", "content": f"{system}\n\n{data}"}]
        [only] = last["messages"]
        assert only["role"] == "user" and only["content"].endswith(f"\n\n{data}")
        instructions = only["content"][: -len(data) - 2]
        assert instructions.startswith(system) and instructions.endswith(schema)
        assert schema not in system and parse_data_block(only["content"]) == parse_data_block(data)
        assert [row[2] for row in calls(staging)] == list(STEPS)
        assert llm_capabilities(staging)[0].step == "json_object_prompt"


def test_a_server_refusing_every_format_stops_the_run_with_a_hint(
    llm_settings: Settings, staging: StagingStore
) -> None:
    with _served(llm_settings, frozenset({"text"})) as (server, settings):
        client = _client(settings, staging, [])
        with pytest.raises(StructuredOutputUnsupported) as refused:
            complete(client)
        assert len(server.requests) == len(STEPS)
        assert "json_object" in refused.value.message and refused.value.hint
        assert [row[1] for row in calls(staging)] == ["unsupported_format"] * len(STEPS)
        with pytest.raises(StructuredOutputUnsupported):  # the same client fails fast after
            complete(client, "seg_2")
        assert len(server.requests) == len(STEPS)


def test_concurrent_calls_step_down_once(
    llama_like: tuple[ScriptedLLMServer, Settings], staging: StagingStore
) -> None:
    server, settings = llama_like
    client = _client(settings, staging, [])
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda i: complete(client, f"seg_{i}"), range(12)))
    assert len(results) == 12
    variants = [format_variant(body) for body in server.requests]
    assert variants.count("json_object_schema") == 12 and variants.count("json_schema") <= 6
    [cap] = llm_capabilities(staging)
    assert cap.step == "json_object_schema" and cap.confirmed


def test_a_request_validation_500_is_not_retried(
    llm_settings: Settings, staging: StagingStore
) -> None:
    with _served(llm_settings, LLAMA_CPP_PYTHON) as (server, settings):
        server.script(error_reply(500, "[{'type': 'int_parsing', 'loc': ('body', 'seed'), "
                                       "'msg': 'Input should be a valid integer'}]"),
                      json_reply(GOOD))
        client = _client(settings.model_copy(update={"llm_max_retries": 3}), staging, [])
        client.ladder.step_down(settings.llm_model, "json_schema", "known")
        with pytest.raises(ExtractionFailed, match="bad_request"):
            complete(client)
        assert len(server.requests) == 1


def test_context_overflow_fails_the_segment_at_once_with_a_hint(
    llm_settings: Settings, staging: StagingStore, llm_server: ScriptedLLMServer
) -> None:
    llm_server.script(error_reply(400, "This model's maximum context length is 2048 tokens. "
                                       "However, you requested 5131 tokens", param="messages"),
                      json_reply(GOOD))
    with pytest.raises(ExtractionFailed) as failed:
        complete(_client(llm_settings, staging, []))
    assert failed.value.error_class == "context_length" and len(llm_server.requests) == 1
    assert "CONCEPTMEM_SEGMENT_MAX_TOKENS" in (failed.value.hint or "")


def test_the_right_optional_parameter_is_dropped(
    llm_settings: Settings, staging: StagingStore, llm_server: ScriptedLLMServer
) -> None:
    client = _client(llm_settings, staging, [])
    client.ladder.step_down(llm_settings.llm_model, "json_schema", "known")
    llm_server.script(error_reply(400, "Unsupported parameter: 'max_tokens' is not supported "
                                       "with this model. Use 'max_completion_tokens' instead."),
                      json_reply(GOOD))
    complete(client)
    assert client.dropped_params == {"max_tokens"}
    assert "max_completion_tokens" in llm_server.requests[1]
    assert "max_tokens" not in llm_server.requests[1]


@pytest.mark.parametrize(("status", "detail", "param", "refused"), [
    (500, "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
          "'msg': \"Input should be 'text' or 'json_object'\"}]", "", True),
    (400, "Invalid parameter: 'response_format' of type 'json_schema' is not supported with "
          "this model.", "response_format", True),
    (400, "Unrecognized request argument supplied: schema", "response_format.schema", True),
    (422, "response_format.json_schema: extra inputs are not permitted", "", True),
    (500, "CUDA error: out of memory", "", False),
    (500, "json_schema grammar compiled", "", False),  # names the format, refuses nothing
    (429, "response_format rate limit", "", False),
    (400, "'messages' must contain the word 'json'", "messages", False),
])
def test_refuses_format_reads_the_servers_answer(
    status: int, detail: str, param: str, refused: bool
) -> None:
    assert refuses_format(status, detail, param) is refused


def test_grammar_schema_bounds_what_a_grammar_compiler_would_leave_open() -> None:
    schema = strict_json_schema(ExtractionResult)
    bounded = grammar_schema(schema, 3)
    mention, relation = bounded["$defs"]["RawMention"], bounded["$defs"]["RawRelation"]
    assert bounded["properties"]["mentions"]["maxItems"] == 3
    assert mention["properties"]["relations"]["maxItems"] == 3
    assert mention["properties"]["quote"]["maxLength"] >= 200
    assert "maxLength" not in mention["properties"]["type"]  # an enum needs no bound
    confidence = relation["properties"]["confidence"]
    assert "minimum" not in confidence and confidence["enum"][0] == 0.0
    assert confidence["enum"][-1] == 1.0 and len(confidence["enum"]) == 11
    assert schema["$defs"]["RawRelation"]["properties"]["confidence"]["maximum"] == 1.0  # a copy
    # Every value the grammar allows is valid for the StrictBase model.
    for value in confidence["enum"]:
        ExtractionResult.model_validate({"mentions": [mention_payload(value)]})


def mention_payload(confidence: float) -> dict[str, Any]:
    return mention("Garden", "build a garden", confidence=confidence, relations=[
        {"target_title": "Garden", "relation": "supports", "confidence": confidence}])


def test_the_grammar_step_only_allows_the_labels_of_the_segment(
    llama_like: tuple[ScriptedLLMServer, Settings], staging: StagingStore
) -> None:
    server, settings = llama_like
    client = _client(settings, staging, [])
    request = sample_request(texts=["one", "two"])
    LLMExtractor(client).extract(request)
    sent = server.requests[-1]["response_format"]["schema"]
    ref = sent["$defs"]["RawMention"]["properties"]["message_ref"]
    assert ref["enum"] == ["m1", "m2"] and "maxLength" not in ref
    assert "enum" not in server.requests[0]["response_format"]["json_schema"]["schema"][
        "$defs"]["RawMention"]["properties"]["message_ref"]  # the strict step is unchanged
