"""Classify an HTTP failure of a chat completion: what happened, and whether retrying can help.

``classify_api_error`` is pure: it reads the openai exception and the body that was sent.
Kinds: ``transient`` (retry with backoff), ``unsupported`` (drop an optional parameter, resend),
``unsupported_format`` (step down the structured-output ladder, resend), ``endpoint`` (stop the
run: key, URL or model is wrong) and ``fatal`` (this segment fails; retrying the same request
cannot help).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import openai

from pipeline.llm.ladder import refuses_format

__all__ = ["OPTIONAL_PARAMS", "Failure", "classify_api_error", "status_detail"]

# Parameters some servers or models reject; on an error naming one, it is dropped for the client.
OPTIONAL_PARAMS = ("reasoning_effort", "temperature", "max_completion_tokens", "max_tokens")
ENDPOINT_STATUSES = {401: "auth_error", 403: "auth_error", 404: "not_found"}

_CONTEXT = re.compile(
    r"context[ _]length|context window|maximum context|too many tokens|prompt is too long",
    re.IGNORECASE,
)
# A 5xx whose body is a request-validation message (pydantic servers answer 500 for those).
_VALIDATION = re.compile(
    r"validation error|input should be|field required|extra inputs are not permitted"
    r"|literal_error|type_error|value_error",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Failure:
    """One classified failure; ``drop`` names the optional parameter to stop sending."""

    kind: str
    error_class: str
    detail: str
    retry_after: float | None = None
    drop: str | None = None


def classify_api_error(exc: openai.APIError, body: dict[str, Any], timeout_s: float) -> Failure:
    """What ``exc`` (raised for ``body``) means for the next step."""
    if isinstance(exc, openai.APITimeoutError):
        return Failure("transient", "timeout", f"no reply within {timeout_s}s")
    if isinstance(exc, openai.APIConnectionError):
        return Failure("transient", "connection_error", str(exc))
    if not isinstance(exc, openai.APIStatusError):
        return Failure("fatal", "api_error", str(exc))
    return _classify_status(exc, body)


def _classify_status(exc: openai.APIStatusError, body: dict[str, Any]) -> Failure:
    status, detail, param = exc.status_code, status_detail(exc), _error_param(exc)
    if status == 429:
        return Failure("transient", "rate_limited", detail, _retry_after(exc))
    if status in (408, 409):  # request timeout, conflict: worth another try
        name = "timeout" if status == 408 else "server_error"
        return Failure("transient", name, detail, _retry_after(exc))
    if status in ENDPOINT_STATUSES:
        return Failure("endpoint", ENDPOINT_STATUSES[status], detail)
    if refuses_format(status, detail, param):
        return Failure("unsupported_format", "unsupported_format", detail)
    if status in (400, 422) or _VALIDATION.search(detail):
        drop = _named_optional(f"{param} {detail}", body)
        if drop is not None:
            return Failure("unsupported", "unsupported_parameter", detail, drop=drop)
    if _CONTEXT.search(detail) or _error_code(exc) == "context_length_exceeded":
        return Failure("fatal", "context_length", detail)
    if status >= 500 and not _VALIDATION.search(detail):
        return Failure("transient", "server_error", detail, _retry_after(exc))
    return Failure("fatal", "bad_request", detail)


def _named_optional(text: str, body: dict[str, Any]) -> str | None:
    """The optional parameter of ``body`` that ``text`` names first, if any."""
    found = []
    for name in OPTIONAL_PARAMS:
        if name not in body:
            continue
        match = re.search(rf"(?<![a-z_]){re.escape(name)}(?![a-z_])", text)
        if match is not None:
            found.append((match.start(), name))
    return min(found)[1] if found else None


def status_detail(exc: openai.APIStatusError) -> str:
    """``HTTP <status>: <the server's message>``, at most 2,000 characters."""
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else error
        if message:
            return f"HTTP {exc.status_code}: {message}"[:2000]
    return f"HTTP {exc.status_code}: {exc.message}"[:2000]


def _error_field(exc: openai.APIStatusError, name: str) -> str:
    """A field of an OpenAI-style error body (``{"error": {"param": ...}}``), or ''."""
    body = exc.body
    error = body.get("error", body) if isinstance(body, dict) else None
    value = error.get(name) if isinstance(error, dict) else None
    return str(value or "")


def _error_param(exc: openai.APIStatusError) -> str:
    return _error_field(exc, "param")


def _error_code(exc: openai.APIStatusError) -> str:
    return _error_field(exc, "code")


def _retry_after(exc: openai.APIStatusError) -> float | None:
    headers = exc.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            continue  # an HTTP date: fall back to our own backoff
    return None
