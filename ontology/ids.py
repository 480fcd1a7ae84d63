"""Content-addressed stable ids: the same input always hashes to the same id."""

from __future__ import annotations

import hashlib
import unicodedata

__all__ = ["normalize_name", "stable_id", "text_hash"]

_SEP = "\x1f"  # unit separator: cannot appear in ordinary identifiers


def stable_id(prefix: str, *parts: object) -> str:
    """``prefix`` + 24 hex chars of SHA-256 over the parts (None hashes as empty)."""
    joined = _SEP.join("" if part is None else str(part) for part in parts)
    digest = hashlib.sha256(joined.encode("utf-8")).hexdigest()[:24]
    return f"{prefix}_{digest}"


def text_hash(text: str) -> str:
    """Full SHA-256 hex digest of a text (embedding cache keys, prompt hashes)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def normalize_name(name: str) -> str:
    """Casefolded, accent-preserving, whitespace-collapsed name used for alias matching."""
    text = unicodedata.normalize("NFKC", name).casefold()
    cleaned = "".join(ch if ch.isalnum() else " " for ch in text)
    return " ".join(cleaned.split())
