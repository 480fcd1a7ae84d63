"""Offline extraction benchmark on a Jocker-scale export (3,253 conversations, 24,639 messages).

Writes synthetic conversations (realistic English from templates: goals, beliefs, projects,
events, tensions, habits, plus plain chat and assistant answers; ~10% with a side branch)
straight into a source db in a temp dir, segments it with the default settings, and runs the
offline extractor over every segment. Prints segments, messages/s for segmentation and for
extraction, mentions found (by type) and how many quotes are verbatim in their message.

    .venv/bin/python benchmarks/extract_offline.py [--conversations 3253] [--messages 24639]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ontology import Conversation, Message, Source, stable_id
from pipeline.offline_extractor import OfflineExtractor
from pipeline.segmenter import segment_store, to_extraction_request
from pipeline.settings import Settings
from staging import SourceStore, StagingStore, transaction
from staging.segments_repo import SegmentsRepo

THINGS = ["a budgeting app", "a habit tracker", "my thesis on coral reefs", "a podcast about jazz",
          "a Rust CLI for backups", "a garden planner", "my portfolio website", "a chess engine",
          "a recipe recommender", "a newsletter about climate", "a board game", "an API for maps"]
GOALS = ["run a marathon next spring", "learn Spanish before the trip", "save for a house",
         "sleep eight hours a night", "read fifty books this year", "get promoted by June",
         "learn to play the piano", "cook at home more often", "ship version two of the app"]
BELIEFS = ["remote work is better for deep focus", "tests matter more than documentation",
           "kids need more unstructured play", "small teams move faster",
           "sleep matters more than diet", "public transport should be free"]
PLACES = ["Berlin", "Lisbon", "Toronto", "Madrid", "Kyoto", "Austin", "Porto", "Oslo"]
TOOLS = ["Python", "SQLite", "Postgres", "React", "Flutter", "Docker", "Kubernetes", "FastAPI"]
HABITS = ["skip breakfast", "check email first thing", "procrastinate on taxes",
          "stay up too late", "overthink messages", "buy books I never read"]
TENSIONS = ["my job and my band", "saving money and travelling", "speed and quality",
            "family time and the startup"]

USER_TEMPLATES = [
    "I want to {goal}. Any advice on where to start?",
    "My goal is to {goal}, but I keep getting distracted.",
    "I'm trying to {goal} while working full time.",
    "I'm building {thing} in {tool}. How should I structure the database?",
    "I've been working on {thing} for a month and it is slow with {tool}.",
    "I believe that {belief}. Do you agree?",
    "In my opinion, {belief}, even if people disagree.",
    "I think that {belief}, at least for me.",
    "I moved to {place} last year and I'm still adjusting.",
    "Last week I started a pottery class in {place}.",
    "I'm torn between {tension}.",
    "I love my job but I also want more time for {thing}.",
    "I always {habit}, and it drives me crazy.",
    "Every time I open my laptop I {habit}.",
    "I tend to {habit} when I am stressed.",
    "Can you explain how {tool} handles transactions?",
    "What is the difference between {tool} and {tool2}?",
    "Thanks, that helps a lot.",
    "Could you summarise this in three bullet points?",
]
ASSISTANT_TEMPLATES = [
    "Great question. {tool} is a good fit here because it is simple and well documented. "
    "Start with a small schema and add indexes once you measure slow queries.",
    "To {goal}, break it into weekly steps and track progress in a simple log. "
    "Consistency matters more than intensity.",
    "Here is a sketch:\n```python\nimport sqlite3\nconn = sqlite3.connect('app.db')\n```\n"
    "Then wrap writes in a transaction.",
    "Many people feel that way. A trade-off between {tension} is normal; try fixing a weekly "
    "budget of hours for each.",
    "{tool} and {tool2} solve different problems: one stores data, the other serves it.",
]


def _fill(template: str, rng: random.Random) -> str:
    tool, tool2 = rng.sample(TOOLS, 2)
    return template.format(
        goal=rng.choice(GOALS), thing=rng.choice(THINGS), belief=rng.choice(BELIEFS),
        place=rng.choice(PLACES), tool=tool, tool2=tool2, habit=rng.choice(HABITS),
        tension=rng.choice(TENSIONS),
    )


def _message(conv: str, index: int, parent: str | None, role: str, text: str,
             at: datetime, current: bool) -> Message:
    return Message(
        id=stable_id("msg", conv, index), conversation_id=conv, source_id="src_bench",
        parent_id=parent, external_id=str(index), role=role,  # type: ignore[arg-type]
        author=None, text=text, parts=[], created_at=at + timedelta(minutes=index),
        position=index, on_current_branch=current, user_scope="bench", assistant_scope="bench",
    )


def _conversation(rng: random.Random, c: int, n: int, branch: bool) -> list[Message]:
    conv = stable_id("conv", c)
    at = datetime(2023, 1, 1, tzinfo=UTC) + timedelta(hours=7 * c)
    messages: list[Message] = []
    parent: str | None = None
    main = n - 2 if branch and n >= 4 else n
    for i in range(main):
        role = "user" if i % 2 == 0 else "assistant"
        pool = USER_TEMPLATES if role == "user" else ASSISTANT_TEMPLATES
        text = " ".join(_fill(rng.choice(pool), rng) for _ in range(rng.randint(1, 3)))
        messages.append(_message(conv, i, parent, role, text, at, True))
        parent = messages[-1].id
    if main < n:  # an edited prompt and its answer, branching off the second message
        fork = messages[1].id
        edit = _message(conv, main, fork, "user", _fill(rng.choice(USER_TEMPLATES), rng), at,
                        False)
        answer = _message(conv, main + 1, edit.id, "assistant",
                          _fill(rng.choice(ASSISTANT_TEMPLATES), rng), at, False)
        messages += [edit, answer]
    return messages


def _generate(source: SourceStore, conversations: int, total: int, seed: int) -> int:
    rng = random.Random(seed)
    now = datetime(2024, 1, 1, tzinfo=UTC)
    sizes = [2] * conversations
    for _ in range(total - 2 * conversations):
        sizes[rng.randrange(conversations)] += 1
    written = 0
    with transaction(source.db):
        source.add_source(Source(id="src_bench", path="bench.json", sha256="0", format="chatgpt",
                                 imported_at=now, user_scope="bench", assistant_scope="bench"))
        for c, size in enumerate(sizes):
            messages = _conversation(rng, c, size, branch=rng.random() < 0.1)
            conv = Conversation(id=messages[0].conversation_id, source_id="src_bench",
                                external_id=str(c), title=f"Chat {c}", created_at=now,
                                updated_at=now, user_scope="bench", assistant_scope="bench")
            written += source.add_conversation(conv, messages).messages
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=3253)
    parser.add_argument("--messages", type=int, default=24639)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(store=Path(tmp) / "store")
        source = SourceStore.open(settings.source_db)
        staging = StagingStore.open(settings.staging_db)
        t0 = time.perf_counter()
        messages = _generate(source, args.conversations, args.messages, args.seed)
        print(f"generated {messages} messages in {args.conversations} conversations"
              f" ({time.perf_counter() - t0:.1f}s)")
        run = staging.start_run("segment", {}, "bench", "bench", "bench")
        t0, c0 = time.perf_counter(), time.process_time()
        segments = segment_store(source, staging, settings, run)
        seg_s, seg_cpu = time.perf_counter() - t0, time.process_time() - c0
        print(f"segmentation: {segments} segments in {seg_s:.2f}s wall"
              f" = {messages / seg_s:,.0f} messages/s ({seg_cpu:.2f}s CPU)")
        t0 = time.perf_counter()
        again = segment_store(source, staging, settings, run)
        print(f"re-segmentation: {again} new segments in {time.perf_counter() - t0:.2f}s")
        _extract_all(source, staging)


def _extract_all(source: SourceStore, staging: StagingStore) -> None:
    repo = SegmentsRepo(staging)
    extractor = OfflineExtractor()
    titles = {c.id: c.title for c in source.conversations()}
    by_type: Counter[str] = Counter()
    covered: set[str] = set()
    verbatim = total = relations = 0
    elapsed = cpu = 0.0
    for row in repo.pending_segments():
        by_id = source.get_messages(row.message_ids)
        request = to_extraction_request(row, by_id, titles.get(row.conversation_id))
        t0, c0 = time.perf_counter(), time.process_time()
        result = extractor.extract(request)
        elapsed += time.perf_counter() - t0
        cpu += time.process_time() - c0
        covered.update(row.message_ids)
        for mention in result.mentions:
            message = request.message_for(mention.message_ref)
            total += 1
            verbatim += bool(message and mention.quote in message.text)
            by_type[mention.type] += 1
            relations += len(mention.relations)
    print(f"extraction ({extractor.label}): {len(covered)} messages in {elapsed:.1f}s wall"
          f" = {len(covered) / elapsed:,.0f} messages/s; {cpu:.1f}s CPU"
          f" = {len(covered) / cpu:,.0f} messages/s per core (extractor time only)")
    print(f"mentions: {total} ({verbatim} verbatim quotes), relations: {relations}")
    print("by type: " + ", ".join(f"{k}={v}" for k, v in sorted(by_type.items())))


if __name__ == "__main__":
    main()
