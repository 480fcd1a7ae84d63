"""OpenAI Batch API mode for backfills: write the input JSONL, later read the output JSONL.

Each output line goes through the same validation, classification and ``llm_calls`` logging as
a live call. No repair retry is possible there: a failed line is recorded and yielded as an
``ExtractionFailed`` so the stage can mark its segment failed (and retry it live later).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ontology import ExtractionRequest, ExtractionResult, schema_hash, strict_json_schema
from pipeline.llm.client import build_chat_body, prompt_hash, response_format
from pipeline.llm.errors import BatchFileError, ExtractionFailed
from pipeline.llm.prompts import render_extraction_messages
from pipeline.llm.tokens import count_message_tokens, count_tokens
from pipeline.llm.validate import Valid, validate_reply
from pipeline.settings import Settings
from staging.llm_log import CallStatus, LLMCallLog, LLMCallRecord

__all__ = ["BATCH_HOST", "read_batch_output", "write_batch_input"]

BATCH_HOST = "batch"
BATCH_URL = "/v1/chat/completions"


def write_batch_input(
    requests: Iterable[ExtractionRequest], settings: Settings, path: Path | str
) -> int:
    """Write one Batch request line per segment (``custom_id`` = segment id); returns the count."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    with target.open("w", encoding="utf-8") as handle:
        for request in requests:
            if request.segment_id in seen:
                raise BatchFileError(str(target), len(seen) + 1,
                                     f"segment {request.segment_id} appears twice")
            seen.add(request.segment_id)
            body = build_chat_body(
                ExtractionResult, render_extraction_messages(request), settings
            )
            line = {"custom_id": request.segment_id, "method": "POST", "url": BATCH_URL,
                    "body": body}
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    return len(seen)


def read_batch_output(
    path: Path | str,
    requests_by_id: Mapping[str, ExtractionRequest],
    log: LLMCallLog,
) -> Iterator[tuple[str, ExtractionResult | ExtractionFailed]]:
    """Validated results, or classified failures, per ``custom_id`` of a Batch output file."""
    source = Path(path)
    try:
        handle = source.open(encoding="utf-8")
    except OSError as exc:
        raise BatchFileError(str(source), None, f"cannot read: {exc.strerror}") from exc
    with handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            item = _parse_line(raw, source, number)
            segment_id = str(item.get("custom_id"))
            request = requests_by_id.get(segment_id)
            if request is None:
                raise BatchFileError(str(source), number,
                                     f"custom_id {segment_id!r} is not a pending segment")
            yield segment_id, _ingest(item, request, log)


def _parse_line(raw: str, source: Path, number: int) -> dict[str, Any]:
    try:
        item = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise BatchFileError(str(source), number, f"not JSON: {exc.msg}") from exc
    if not isinstance(item, dict) or not item.get("custom_id"):
        raise BatchFileError(str(source), number, "a batch output line needs a custom_id")
    return item


def _ingest(
    item: dict[str, Any], request: ExtractionRequest, log: LLMCallLog
) -> ExtractionResult | ExtractionFailed:
    response = item.get("response") or {}
    body = response.get("body") if isinstance(response, dict) else None
    body = body if isinstance(body, dict) else {}
    messages = render_extraction_messages(request)
    sent: dict[str, Any] = {"model": body.get("model") or "batch", "messages": messages,
                            "response_format": response_format(ExtractionResult)}
    error_class, detail, reply, value = _judge_line(item, response, body)
    prompt, done, estimated = _usage(body, sent, reply)
    status: CallStatus = "ok" if value is not None else (
        "invalid" if reply is not None else "error"
    )
    log.record(
        LLMCallRecord(
            segment_id=request.segment_id,
            schema_name=ExtractionResult.__name__,
            schema_hash=schema_hash(strict_json_schema(ExtractionResult)),
            model=str(sent["model"]),
            base_url_host=BATCH_HOST,
            prompt_hash=prompt_hash(messages),
            attempt=1,
            request=sent,
            reply=reply,
            prompt_tokens=prompt,
            completion_tokens=done,
            tokens_estimated=estimated,
            latency_ms=None,
            status=status,
            error_class=error_class,
            error_detail=detail or None,
        )
    )
    if value is not None:
        return value
    return ExtractionFailed(error_class or "error", detail, request.segment_id)


def _judge_line(
    item: dict[str, Any], response: Any, body: dict[str, Any]
) -> tuple[str | None, str, str | None, ExtractionResult | None]:
    """(error_class, detail, reply text, validated value) of one output line."""
    error = item.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else str(error)
        return "batch_error", str(message), None, None
    status = response.get("status_code") if isinstance(response, dict) else None
    if status != 200:
        kind = "bad_request"
        if isinstance(status, int) and (status == 429 or status >= 500):
            kind = "rate_limited" if status == 429 else "server_error"
        return kind, f"HTTP {status}: {json.dumps(body.get('error', body))[:500]}", None, None
    choices = body.get("choices") or []
    if not choices:
        return "empty_reply", "the reply had no choices", "", None
    message = choices[0].get("message") or {}
    text, refusal = message.get("content"), message.get("refusal")
    verdict = validate_reply(ExtractionResult, text,
                             finish_reason=choices[0].get("finish_reason"), refusal=refusal)
    if isinstance(verdict, Valid):
        return None, "", text, verdict.value
    return verdict.error_class, verdict.detail, text if text is not None else (refusal or ""), None


def _usage(
    body: dict[str, Any], sent: dict[str, Any], reply: str | None
) -> tuple[int | None, int | None, bool]:
    if reply is None:
        return None, None, False
    usage = body.get("usage") or {}
    prompt, done = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if isinstance(prompt, int) and isinstance(done, int):
        return prompt, done, False
    schema = sent["response_format"]["json_schema"]["schema"]
    return count_message_tokens(sent["messages"], schema), count_tokens(reply), True
