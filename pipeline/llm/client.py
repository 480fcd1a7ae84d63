"""A structured-output client for any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp).

``StructuredClient.complete`` sends the schema as ``response_format`` (the strictest format the
endpoint accepts, see ``pipeline.llm.ladder``), validates the reply against the StrictBase model
and returns the model, never a dict. Every HTTP attempt is a row in ``llm_calls``. Retries are
ours (the openai client runs with ``max_retries=0``): repair retries feed the validation error
back, transient errors back off exponentially, errors no retry can fix fail at once.
"""

from __future__ import annotations

import functools
import json
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import urlsplit

import openai

from ontology import StrictBase, schema_hash, strict_json_schema, text_hash
from pipeline.llm.errors import ExtractionFailed, LLMEndpointError, StructuredOutputUnsupported
from pipeline.llm.failures import OPTIONAL_PARAMS, classify_api_error
from pipeline.llm.ladder import STEPS, Choices, Ladder, format_for, messages_for
from pipeline.llm.tokens import count_message_tokens, count_tokens
from pipeline.llm.validate import Invalid, Valid, validate_reply
from pipeline.settings import Settings
from staging.llm_log import LLMCallLog, LLMCallRecord

__all__ = [
    "OPTIONAL_PARAMS",
    "Completed",
    "StructuredClient",
    "build_chat_body",
    "host_of",
    "prompt_hash",
    "response_format",
    "usage_tokens",
]

M = TypeVar("M", bound=StrictBase)

REPAIR_PROMPT = (
    "Your reply was rejected ({error_class}): {detail}\n"
    "Reply again with only the JSON object, following the schema exactly."
)


@dataclass(frozen=True)
class Completed(Generic[M]):
    """A validated reply and the ``llm_calls`` row it came from."""

    value: M
    call_id: str
    attempts: int


@dataclass
class _Outcome:
    """What one attempt came to; ``kind`` is ok | invalid | transient | unsupported |
    unsupported_format | fatal."""

    kind: str
    error_class: str | None = None
    detail: str = ""
    reply: str | None = None
    retry_after: float | None = None
    value: Any = None
    call_id: str = ""
    step: str = STEPS[0]


@dataclass
class _Budget:
    attempt: int = 0
    transient: int = 0
    repairs: int = 0
    model: str | None = None
    conversation: list[dict[str, Any]] = field(default_factory=list)
    choices: Choices = ()


def host_of(base_url: str | None) -> str:
    """Host (and port) of a base URL, never its path, user info or key."""
    parts = urlsplit(base_url or "https://api.openai.com/v1")
    return parts.hostname + (f":{parts.port}" if parts.port else "") if parts.hostname else "?"


def response_format(model_cls: type[StrictBase]) -> dict[str, Any]:
    """The strict ``json_schema`` ``response_format`` for ``model_cls`` (cached: treat it as
    read-only)."""
    return format_for(STEPS[0], model_cls)


def build_chat_body(
    model_cls: type[StrictBase],
    messages: Sequence[dict[str, Any]],
    settings: Settings,
    dropped: frozenset[str] = frozenset(),
    model: str | None = None,
    step: str = STEPS[0],
    choices: Choices = (),
) -> dict[str, Any]:
    """The ``/v1/chat/completions`` body: messages plus the ``response_format`` of ``step``.

    Below the first step the server is not OpenAI's: the completion limit is also sent under
    its older name ``max_tokens``, which llama.cpp-style servers read.
    """
    body: dict[str, Any] = {
        "model": model or settings.llm_model,
        "messages": messages_for(step, model_cls, messages),
        "response_format": format_for(step, model_cls, settings.llm_grammar_max_items, choices),
        "temperature": settings.llm_temperature,
    }
    if settings.llm_reasoning_effort is not None:
        body["reasoning_effort"] = settings.llm_reasoning_effort
    if settings.llm_max_completion_tokens is not None:
        body["max_completion_tokens"] = settings.llm_max_completion_tokens
        if step != STEPS[0]:
            body["max_tokens"] = settings.llm_max_completion_tokens
    for name in dropped:
        body.pop(name, None)
    return body


class StructuredClient:
    """Validated structured completions with bounded repair and transient retries."""

    def __init__(
        self,
        settings: Settings,
        log: LLMCallLog,
        *,
        backoff_base_s: float | None = None,
        backoff_max_s: float | None = None,
        salvage_json: bool = False,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.settings = settings
        self.log = log
        self.host = host_of(settings.llm_base_url)
        self.backoff_base_s = (
            settings.llm_backoff_base_s if backoff_base_s is None else backoff_base_s
        )
        self.backoff_max_s = settings.llm_backoff_max_s if backoff_max_s is None else backoff_max_s
        self.salvage_json = salvage_json
        self._sleep = sleep
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else "not-needed"
        self._openai = openai.OpenAI(
            base_url=settings.llm_base_url,
            api_key=key,
            timeout=settings.llm_timeout_s,
            max_retries=0,
        )
        self.ladder = Ladder(self.host, log)
        self._dropped: set[str] = set()
        self._lock = threading.Lock()
        self._local = threading.local()

    @property
    def dropped_params(self) -> frozenset[str]:
        """Optional parameters this endpoint rejected; they are no longer sent."""
        with self._lock:
            return frozenset(self._dropped)

    @property
    def last_call_id(self) -> str | None:
        """The ``llm_calls`` id of this thread's last validated reply."""
        return getattr(self._local, "call_id", None)

    def complete(
        self,
        model_cls: type[M],
        messages: Sequence[dict[str, Any]],
        segment_id: str | None = None,
        model: str | None = None,
    ) -> M:
        """The validated reply; raises ``ExtractionFailed`` once the retry bounds are spent."""
        return self.complete_logged(model_cls, messages, segment_id, model).value

    def complete_logged(
        self,
        model_cls: type[M],
        messages: Sequence[dict[str, Any]],
        segment_id: str | None = None,
        model: str | None = None,
        choices: Choices = (),
    ) -> Completed[M]:
        """Like ``complete``, with the id of the ``llm_calls`` row and the attempt count.

        ``choices`` names string fields and the only values this request allows; servers that
        compile the schema to a grammar enforce them (see ``ladder.format_for``).
        """
        budget = _Budget(conversation=list(messages), model=model or self.settings.llm_model,
                         choices=choices)
        refused = self.ladder.exhausted(str(budget.model))
        if refused is not None:  # every format was refused already: no request can succeed
            raise StructuredOutputUnsupported(self.base_url, str(budget.model), refused)
        while True:
            budget.attempt += 1
            out = self._attempt(model_cls, budget, segment_id)
            if out.kind == "ok":
                self.ladder.confirm(str(budget.model), out.step)
                self._local.call_id = out.call_id
                return Completed(out.value, out.call_id, budget.attempt)
            self._after_failure(out, budget, segment_id)

    @property
    def base_url(self) -> str:
        return self.settings.llm_base_url or "https://api.openai.com/v1"

    def structured_output(self, model: str | None = None) -> str:
        """The ladder step the next call for ``model`` will use."""
        return self.ladder.step(model or self.settings.llm_model)

    def _after_failure(self, out: _Outcome, budget: _Budget, segment_id: str | None) -> None:
        """Decide the next step after a failed attempt, or raise when a bound is reached."""
        error_class = out.error_class or "error"
        if out.kind == "unsupported":
            return  # the parameter is dropped; retrying without it costs no budget
        if out.kind == "unsupported_format":
            # The next step of the ladder; at most len(STEPS) - 1 of these per call.
            if self.ladder.step_down(str(budget.model), out.step, out.detail) is None:
                raise StructuredOutputUnsupported(self.base_url, str(budget.model), out.detail)
            return
        if out.kind == "transient" and budget.transient < self.settings.llm_max_retries:
            self._sleep(self._delay(budget.transient, out.retry_after))
            budget.transient += 1
            return
        if out.kind == "invalid" and budget.repairs < self.settings.llm_repair_attempts:
            budget.repairs += 1
            budget.conversation.extend(_repair_messages(out))
            return
        raise ExtractionFailed(error_class, out.detail, segment_id)

    def _delay(self, retry: int, retry_after: float | None) -> float:
        backoff = self.backoff_base_s * (2**retry) + random.uniform(0, self.backoff_base_s)
        if retry_after is not None:
            backoff = max(backoff, retry_after)
        return float(min(backoff, self.backoff_max_s))

    def _attempt(
        self,
        model_cls: type[StrictBase],
        budget: _Budget,
        segment_id: str | None,
    ) -> _Outcome:
        attempt, step = budget.attempt, self.ladder.step(str(budget.model))
        body = build_chat_body(
            model_cls, budget.conversation, self.settings, self.dropped_params, budget.model,
            step, budget.choices,
        )
        started = time.perf_counter()
        try:
            completion = self._openai.chat.completions.create(**body)
        except openai.APIError as exc:
            latency = (time.perf_counter() - started) * 1000
            out = self._api_failure(exc, body)
            out.step = step
            self._record(model_cls, body, segment_id, attempt, out, None, latency)
            if out.kind == "endpoint":
                status = getattr(exc, "status_code", None)
                raise LLMEndpointError(self.base_url, status, out.detail) from exc
            return out
        latency = (time.perf_counter() - started) * 1000
        out = self._judge(model_cls, completion)
        out.step = step
        out.call_id = self._record(model_cls, body, segment_id, attempt, out, completion, latency)
        return out

    def _judge(self, model_cls: type[StrictBase], completion: Any) -> _Outcome:
        choices = getattr(completion, "choices", None) or []
        if not choices:
            return _Outcome("invalid", "empty_reply", "the reply had no choices")
        choice = choices[0]
        message = getattr(choice, "message", None)
        text = getattr(message, "content", None)
        refusal = getattr(message, "refusal", None)
        verdict = validate_reply(
            model_cls,
            text if isinstance(text, str) else None,
            finish_reason=getattr(choice, "finish_reason", None),
            refusal=refusal if isinstance(refusal, str) else None,
            salvage=self.salvage_json,
        )
        if isinstance(verdict, Valid):
            return _Outcome("ok", reply=text, value=verdict.value)
        assert isinstance(verdict, Invalid)
        return _Outcome("invalid", verdict.error_class, verdict.detail, reply=text or refusal)

    def _api_failure(self, exc: openai.APIError, body: dict[str, Any]) -> _Outcome:
        failure = classify_api_error(exc, body, self.settings.llm_timeout_s)
        if failure.drop is not None:
            with self._lock:
                self._dropped.add(failure.drop)
        return _Outcome(failure.kind, failure.error_class, failure.detail,
                        retry_after=failure.retry_after)

    def _record(
        self,
        model_cls: type[StrictBase],
        body: dict[str, Any],
        segment_id: str | None,
        attempt: int,
        out: _Outcome,
        completion: Any,
        latency_ms: float,
    ) -> str:
        prompt, done, estimated = usage_tokens(completion, body, out.reply)
        status = {"ok": "ok", "invalid": "invalid"}.get(out.kind, "error")
        return self.log.record(
            LLMCallRecord(
                segment_id=segment_id,
                schema_name=model_cls.__name__,
                schema_hash=_schema_hash_of(model_cls),
                model=str(getattr(completion, "model", None) or body["model"]),
                base_url_host=self.host,
                prompt_hash=prompt_hash(body["messages"]),
                attempt=attempt,
                request=body,
                reply=out.reply,
                prompt_tokens=prompt,
                completion_tokens=done,
                tokens_estimated=estimated,
                latency_ms=round(latency_ms, 2),
                status=status,  # type: ignore[arg-type]
                error_class=out.error_class,
                error_detail=out.detail or None,
                structured_output=out.step,
            )
        )


@functools.lru_cache(maxsize=64)
def _schema_hash_of(model_cls: type[StrictBase]) -> str:
    return schema_hash(strict_json_schema(model_cls))


def prompt_hash(messages: Sequence[dict[str, Any]]) -> str:
    canonical = json.dumps(list(messages), sort_keys=True, ensure_ascii=False)
    return text_hash(canonical)[:16]


def usage_tokens(
    completion: Any, body: dict[str, Any], reply: str | None
) -> tuple[int | None, int | None, bool]:
    """Prompt and completion tokens from the reply's usage, else estimated; HTTP errors: None."""
    if completion is None:
        return None, None, False
    usage = getattr(completion, "usage", None)
    prompt = getattr(usage, "prompt_tokens", None)
    done = getattr(usage, "completion_tokens", None)
    if isinstance(prompt, int) and isinstance(done, int):
        return prompt, done, False
    fmt = body["response_format"]
    schema = fmt.get("json_schema", {}).get("schema") or fmt.get("schema")
    return count_message_tokens(body["messages"], schema), count_tokens(reply or ""), True


def _repair_messages(out: _Outcome) -> list[dict[str, Any]]:
    return [
        {"role": "assistant", "content": out.reply or ""},
        {
            "role": "user",
            "content": REPAIR_PROMPT.format(error_class=out.error_class, detail=out.detail),
        },
    ]
