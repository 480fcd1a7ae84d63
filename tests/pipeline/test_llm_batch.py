"""Batch API mode: write the input JSONL, read an output JSONL through the same validation."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_server import mention, sample_request

from ontology import ExtractionResult, strict_json_schema
from pipeline.llm import (
    BatchFileError,
    ExtractionFailed,
    LLMCallLog,
    llm_call_counts,
    read_batch_output,
    render_extraction_messages,
    write_batch_input,
)
from pipeline.settings import Settings
from staging import StagingStore


@pytest.fixture
def staging(settings: Settings) -> Iterator[StagingStore]:
    store = StagingStore.open(settings.staging_db)
    yield store
    store.close()


@pytest.fixture
def log(staging: StagingStore) -> Iterator[LLMCallLog]:
    call_log = LLMCallLog(staging, staging.start_run("extract", {}, "test", "u", "a"))
    yield call_log
    call_log.close()


def output_line(custom_id: str, content: str | None = None, *, status: int = 200,
                usage: bool = True, error: dict[str, Any] | None = None) -> str:
    body: dict[str, Any] = {"model": "gpt-4.1-mini-2025-04-14", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": content, "refusal": None},
         "finish_reason": "stop"}]}
    if usage:
        body["usage"] = {"prompt_tokens": 321, "completion_tokens": 45, "total_tokens": 366}
    if status != 200:
        body = {"error": {"message": "The server had an error", "type": "server_error"}}
    response = None if error else {"status_code": status, "request_id": "r", "body": body}
    return json.dumps({"id": f"batch_req_{custom_id}", "custom_id": custom_id,
                       "response": response, "error": error})


def test_write_batch_input_writes_one_strict_request_per_segment(
    settings: Settings, tmp_path: Path
) -> None:
    requests = [sample_request(f"seg_{i}") for i in range(3)]
    path = tmp_path / "batch" / "input.jsonl"
    assert write_batch_input(requests, settings, path) == 3
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["custom_id"] for line in lines] == ["seg_0", "seg_1", "seg_2"]
    for line, request in zip(lines, requests, strict=True):
        assert line["method"] == "POST" and line["url"] == "/v1/chat/completions"
        body = line["body"]
        assert body["model"] == settings.llm_model
        assert body["messages"] == render_extraction_messages(request)
        assert body["response_format"]["json_schema"]["strict"] is True
        assert body["response_format"]["json_schema"]["schema"] == strict_json_schema(
            ExtractionResult
        )


def test_duplicate_segments_are_refused(settings: Settings, tmp_path: Path) -> None:
    with pytest.raises(BatchFileError, match="appears twice"):
        write_batch_input([sample_request("s"), sample_request("s")], settings, tmp_path / "i")


def test_read_batch_output_validates_classifies_and_logs_every_line(
    staging: StagingStore, log: LLMCallLog, tmp_path: Path
) -> None:
    ids = ["good", "no_usage", "extra", "prose", "http500", "expired"]
    requests = {segment_id: sample_request(segment_id) for segment_id in ids}
    good = json.dumps({"mentions": [mention("Vegetable garden", "vegetable garden")]})
    extra = json.dumps({"mentions": [mention("Garden", "garden", id="c_1")]})
    path = tmp_path / "output.jsonl"
    path.write_text("\n".join([
        output_line("good", good),
        output_line("no_usage", good, usage=False),
        output_line("extra", extra),
        output_line("prose", f"Here you go: {good}"),
        output_line("http500", status=500),
        output_line("expired", error={"code": "batch_expired", "message": "not run in time"}),
    ]) + "\n")
    results = dict(read_batch_output(path, requests, log))
    assert isinstance(results["good"], ExtractionResult)
    assert results["good"].mentions[0].quote == "vegetable garden"
    assert isinstance(results["no_usage"], ExtractionResult)
    classes = {k: v.error_class for k, v in results.items() if isinstance(v, ExtractionFailed)}
    assert classes == {"extra": "extra_keys", "prose": "prose_around_json",
                       "http500": "server_error", "expired": "batch_error"}
    assert all(v.segment_id == k for k, v in results.items() if isinstance(v, ExtractionFailed))
    logged = {r["segment_id"]: r for r in staging.db.query("SELECT * FROM llm_calls")}
    assert {k: (r["status"], r["error_class"]) for k, r in logged.items()} == {
        "good": ("ok", None), "no_usage": ("ok", None), "extra": ("invalid", "extra_keys"),
        "prose": ("invalid", "prose_around_json"), "http500": ("error", "server_error"),
        "expired": ("error", "batch_error"),
    }
    assert (logged["good"]["prompt_tokens"], logged["good"]["tokens_estimated"]) == (321, 0)
    assert logged["no_usage"]["tokens_estimated"] == 1 and logged["no_usage"]["prompt_tokens"]
    assert logged["good"]["base_url_host"] == "batch"
    assert logged["good"]["model"] == "gpt-4.1-mini-2025-04-14"
    assert llm_call_counts(staging)["status:ok"] == 2
    assert staging.count("extractions") == 0


def test_unknown_custom_id_and_broken_lines_name_file_and_line(
    log: LLMCallLog, tmp_path: Path
) -> None:
    requests = {"seg_1": sample_request("seg_1")}
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text(output_line("seg_9", "{}") + "\n")
    with pytest.raises(BatchFileError) as caught:
        list(read_batch_output(unknown, requests, log))
    assert caught.value.line == 1 and "seg_9" in caught.value.reason
    broken = tmp_path / "broken.jsonl"
    broken.write_text(output_line("seg_1", '{"mentions": []}') + "\n\n{not json\n")
    with pytest.raises(BatchFileError) as caught:
        list(read_batch_output(broken, requests, log))
    assert caught.value.line == 3 and str(broken) in caught.value.message
    with pytest.raises(BatchFileError, match="cannot read"):
        list(read_batch_output(tmp_path / "missing.jsonl", requests, log))
