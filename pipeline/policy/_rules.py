"""Sensitivity rules: pure functions from a text to a class and the names of the rules hit.

Rules are patterns over the text's shape (contact data, card and account numbers, credentials)
and a short list of health and finance words; settings add patterns and per-source overrides.
Nothing here reads files or settings: the caller passes the extra rules in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["CLASSES", "Rule", "builtin_rules", "classify", "luhn_ok", "most_sensitive"]

CLASSES = ("public", "internal", "personal", "restricted")
_RANK = {name: rank for rank, name in enumerate(CLASSES)}


@dataclass(frozen=True)
class Rule:
    name: str
    sensitivity: str
    pattern: re.Pattern[str]
    check: str | None = None  # "luhn": the match must pass the Luhn checksum
    # cheap prefilter: the rule runs only if one of these occurs in the casefolded text, or
    # (``shape``) a case-sensitive pattern matches; None: always run
    hints: tuple[str, ...] | None = None
    shape: re.Pattern[str] | None = None


def _rule(name: str, sensitivity: str, pattern: str, check: str | None = None,
          hints: tuple[str, ...] | None = None, shape: str | None = None) -> Rule:
    return Rule(name, sensitivity, re.compile(pattern, re.IGNORECASE | re.UNICODE), check,
                hints, re.compile(shape) if shape else None)


_HEALTH_HINTS = ("diagnos", "prescri", "medication", "antidepressant", "chemotherapy", "therap",
                 "psychiatr", " hiv", "cancer", "diabet", "pregnan", "surgery", "blood pressure",
                 "insulin", "diagnóstico", "médico", "krankheit", "maladie", "hastalık", "ilaç",
                 "诊断", "药物")
_FINANCE_HINTS = ("salary", "bank account", "account number", "routing number", "mortgage",
                  "credit score", "tax return", "iban", "sort code", "net worth", "debt of",
                  "loan of", "salario", "gehalt", "salaire", "maaş", "工资")


_HEALTH = (
    r"diagnos\w*|prescri\w*|medication|antidepressant\w*|chemotherapy|therap(?:y|ist)"
    r"|psychiatr\w*|hiv\b|cancer|diabet\w*|pregnan\w*|surgery|blood pressure|insulin"
    r"|diagnóstico|médico|krankheit|maladie|hastalık|ilaç|诊断|药物"
)
_FINANCE = (
    r"salary|bank account|account number|routing number|mortgage|credit score|tax return"
    r"|iban\b|sort code|net worth|debt of|loan of|salario|gehalt|salaire|maaş|工资"
)


def builtin_rules() -> list[Rule]:
    street = ("street", "avenue", "road", "boulevard", "blvd", "lane", " st.", " ave.")
    return [
        _rule("contact.email", "personal", r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b", hints=("@",)),
        _rule("contact.phone", "personal",
              r"(?<![\w+])\+\d{1,3}[\s.-]?(?:\(\d{1,4}\)[\s.-]?)?\d{1,4}(?:[\s.-]?\d{2,4}){2,4}\b",
              hints=("+",)),
        _rule("contact.phone_context", "personal",
              r"\b(?:phone|call me|tel|mobile|cell|whatsapp|text me)\b\D{0,20}\d[\d\s().-]{6,}\d",
              hints=("phone", "call me", "tel:", "tel.", "mobile", "cell", "whatsapp", "text me")),
        _rule("contact.address", "personal",
              r"\b\d{1,5}\s+(?:[A-Z][\w'-]*\s+){1,4}(?:street|st|avenue|ave|road|rd"
              r"|boulevard|blvd|lane|ln|drive|dr)\b\.?", hints=street, shape=r"\d \w"),
        _rule("identity.birth", "personal", r"\b(?:date of birth|born on|my birthday)\b",
              hints=("birth", "born")),
        _rule("identity.national_id", "restricted", r"\b\d{3}-\d{2}-\d{4}\b",
              shape=r"\d{3}-\d\d-"),
        _rule("finance.card", "restricted", r"\b(?:\d[ -]?){13,19}\b", "luhn",
              shape=r"\d{4}[ -]?\d{4}"),
        _rule("finance.iban", "restricted", r"\b[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){3,7}\b",
              shape=r"[A-Z]{2}\d{2}"),
        _rule("finance.terms", "restricted", rf"\b(?:{_FINANCE})", hints=_FINANCE_HINTS),
        _rule("health.terms", "restricted", rf"\b(?:{_HEALTH})", hints=_HEALTH_HINTS),
        _rule("credential", "restricted",
              r"\b(?:password|passcode|api[_ -]?key|secret[_ -]?key|access[_ -]?token)\b"
              r"\s*(?:is|:|=)\s*\S+", hints=("password", "passcode", "api", "secret", "token")),
        _rule("credential.key", "restricted", r"\b(?:sk|pk|ghp|xox[bp])[-_][A-Za-z0-9]{16,}\b",
              hints=("sk-", "sk_", "pk-", "pk_", "ghp", "xox")),
    ]


def luhn_ok(candidate: str) -> bool:
    digits = [int(c) for c in candidate if c.isdigit()]
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for i, digit in enumerate(reversed(digits)):
        if i % 2 == 1:
            digit *= 2
            digit -= 9 if digit > 9 else 0
        total += digit
    return total % 10 == 0


def most_sensitive(classes: Iterable[str], default: str = "public") -> str:
    """The highest class of ``classes`` (a derived row is as sensitive as its evidence)."""
    best = default
    for name in classes:
        if _RANK.get(name, _RANK["restricted"]) > _RANK[best]:
            best = name if name in _RANK else "restricted"
    return best


def _hits(rule: Rule, text: str, folded: str | None = None) -> bool:
    if rule.hints is not None and not any(h in (folded or text.casefold()) for h in rule.hints):
        return False
    if rule.shape is not None and rule.shape.search(text) is None:
        return False
    for match in rule.pattern.finditer(text):
        if rule.check != "luhn" or luhn_ok(match.group(0)):
            return True
    return False


def classify(
    text: str, rules: Sequence[Rule], default: str = "internal",
    override: str | None = None,
) -> tuple[str, list[str]]:
    """(class, rule names hit). ``override`` (a per-source setting) wins over every rule."""
    if override is not None:
        return override, [f"override.{override}"]
    folded = text.casefold()
    hit = [rule for rule in rules if _hits(rule, text, folded)]
    return most_sensitive((r.sensitivity for r in hit), default), sorted({r.name for r in hit})


def extra_rules(patterns: Mapping[str, str]) -> list[Rule]:
    """Rules from settings: ``{"class:name": "regex"}``."""
    rules = []
    for key, pattern in patterns.items():
        sensitivity, _, name = key.partition(":")
        rules.append(_rule(f"setting.{name or 'rule'}", sensitivity, pattern))
    return rules
