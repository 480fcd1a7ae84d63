"""The extract stage: segments -> validated extraction -> verified evidence -> concepts.

``extract_store`` segments the source db (idempotent), then takes the pending segments in a
fixed order, runs the extractor (offline, or an LLM with bounded concurrency), and for each
segment commits ONE transaction holding: the validated extraction row, its mentions with their
verification, the mapper's decisions, concepts, evidence, revisions and relations, and the
segment's new status. A kill at any point leaves every segment either fully done or pending;
re-running completes the rest with no duplicate and no loss. All SQLite writes happen on the
calling thread; worker threads only call the extractor (whose LLM log locks for itself).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ontology import ExtractionResult, Extractor, schema_hash, stable_id, strict_json_schema
from pipeline import __version__
from pipeline.evidence import verify_mention
from pipeline.extract_work import (
    SegmentWork,
    dry_run_estimate,
    open_source,
    pending_work,
)
from pipeline.llm import CostEstimate, ExtractionFailed, NothingExtracted, hint_for
from pipeline.mapping import MappingInput, MappingTally, SemanticMapper
from pipeline.settings import Settings
from staging import Run, StagingStore, transaction
from staging.concept_repo import ConceptRepo, MentionRow
from staging.lock import writes_store
from staging.receipts import stage_receipt
from staging.segments_repo import SegmentsRepo

__all__ = ["ExtractReport", "build_extractor", "extract_store"]

Outcome = ExtractionResult | ExtractionFailed


@dataclass
class ExtractReport:
    """What one extract run did (also stored as the run's stats)."""

    run_id: str | None = None
    extractor: str = ""
    segments_new: int = 0
    segments_pending: int = 0
    segments_done: int = 0
    segments_failed: int = 0
    segments_skipped: int = 0
    mentions: int = 0
    verified: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    mapping: MappingTally = field(default_factory=MappingTally)
    llm_failures: Counter[str] = field(default_factory=Counter)
    llm_failure_details: dict[str, str] = field(default_factory=dict)  # last detail per class
    structured_output: str | None = None  # the ladder step the LLM calls ended on
    concepts: int = 0
    evidence_total: int = 0
    estimate: CostEstimate | None = None
    batch_written: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id, "extractor": self.extractor,
            "segments_new": self.segments_new, "segments_pending": self.segments_pending,
            "segments_done": self.segments_done, "segments_failed": self.segments_failed,
            "segments_skipped": self.segments_skipped, "mentions": self.mentions,
            "verified": self.verified, "rejected": dict(self.rejected),
            "decisions": dict(self.mapping.actions),
            "mapper_rejects": dict(self.mapping.reject_reasons),
            "evidence_added": self.mapping.evidence, "relations_added": self.mapping.relations,
            "llm_failures": dict(self.llm_failures),
            "structured_output": self.structured_output, "concepts": self.concepts,
            "evidence": self.evidence_total,
        }

    def summary(self) -> str:
        if self.estimate is not None:
            e = self.estimate
            return (f"dry run ({self.extractor}): {e.calls} calls, ~{e.prompt_tokens} prompt"
                    f" tokens, at most {e.max_completion_tokens} completion tokens"
                    f" ({e.messages} messages)")
        if self.batch_written is not None:
            return f"wrote {self.batch_written} batch requests"
        decisions = ", ".join(f"{k} {v}" for k, v in sorted(self.mapping.actions.items()))
        rejected = ", ".join(f"{k} {v}" for k, v in sorted(self.rejected.items())) or "none"
        failures = ", ".join(f"{k} {v}" for k, v in sorted(self.llm_failures.items()))
        fmt = f" [structured output: {self.structured_output}]" if self.structured_output else ""
        lines = [
            f"extract ({self.extractor}){fmt}: {self.segments_done} segments done,"
            f" {self.segments_failed} failed ({failures or 'no failures'});"
            f" {self.mentions} mentions, {self.verified} verified, rejected: {rejected};"
            f" decisions: {decisions or 'none'}; {self.concepts} concepts,"
            f" {self.evidence_total} evidence spans"
        ]
        for name, detail in sorted(self.llm_failure_details.items()):
            lines.append(f"  {name}: {detail[:300]}\n    hint: {hint_for(name)}")
        return "\n".join(lines)

    def nothing_succeeded(self) -> NothingExtracted | None:
        """The error to raise when segments were tried and every one of them failed."""
        if self.segments_failed == 0 or self.segments_done > 0:
            return None
        return NothingExtracted(self.segments_failed, dict(self.llm_failures),
                                self.llm_failure_details)


def build_extractor(settings: Settings, staging: StagingStore, run: Run,
                    offline: bool | None = None, stack: ExitStack | None = None) -> Extractor:
    """Offline extractor unless an endpoint or key is configured (``offline`` forces it).

    The LLM extractor's call log is closed by ``stack`` when given.
    """
    if offline or (offline is None and settings.offline):
        from pipeline.offline_extractor import OfflineExtractor

        return OfflineExtractor()
    from pipeline.llm import LLMCallLog, LLMExtractor, StructuredClient

    log = LLMCallLog(staging, run)
    if stack is not None:
        stack.callback(log.close)
    return LLMExtractor(StructuredClient(settings, log), settings.llm_model)


@writes_store("extract")
def extract_store(
    settings: Settings,
    *,
    extractor: Extractor | None = None,
    offline: bool | None = None,
    dry_run: bool = False,
    batch_out: Path | str | None = None,
    batch_in: Path | str | None = None,
    progress: bool = False,
    limit: int | None = None,
) -> ExtractReport:
    """Run the extract stage over the store named by ``settings``.

    ``limit`` caps the pending segments taken this run (in their fixed order; the rest stay
    pending). Raises ``NothingExtracted`` when segments were tried and none succeeded.
    """
    if dry_run:
        uses_llm = extractor is None and not (offline or (offline is None and settings.offline))
        label = f"llm:{settings.llm_model}" if uses_llm else "offline: no LLM calls would be made"
        return ExtractReport(extractor=label, estimate=dry_run_estimate(settings))
    source = open_source(settings)
    staging = StagingStore.open(settings.staging_db)
    stage = _Stage(settings, source, staging, extractor, offline)
    stage.limit = limit
    try:
        with stage.closing:
            return stage.run(batch_out=batch_out, batch_in=batch_in, progress=progress)
    finally:
        staging.close()
        source.close()


class _Stage:
    def __init__(self, settings: Settings, source: Any, staging: StagingStore,
                 extractor: Extractor | None, offline: bool | None) -> None:
        self.settings, self.source, self.staging = settings, source, staging
        self.segments = SegmentsRepo(staging)
        self.repo = ConceptRepo(staging)
        self.report = ExtractReport()
        self._extractor, self._offline = extractor, offline
        self.closing = ExitStack()
        self.limit: int | None = None
        self._active: Extractor | None = None

    def run(self, *, batch_out: Path | str | None, batch_in: Path | str | None,
            progress: bool) -> ExtractReport:
        from pipeline.segmenter import segment_store

        run = self.staging.start_run("extract", self._config(), __version__,
                                     self.settings.user_scope, self.settings.assistant_scope)
        self.report.run_id = run.id
        try:
            self.report.segments_new = segment_store(self.source, self.staging, self.settings, run)
            stage_receipt(self.staging.db, run, "segment", run.id, None)
            pending = self.segments.pending_segments()
            if self.limit is not None:
                pending = pending[: max(0, self.limit)]
            self.report.segments_pending = len(pending)
            works = pending_work(self.source, pending)
            if batch_out is not None:
                self._batch_out(works, batch_out)
            else:
                self._extract_all(run, works, batch_in, progress, len(pending))
        except BaseException as exc:
            self.staging.finish_run(run, "failed", self.report.as_dict(), error=repr(exc)[:2000])
            raise
        self.report.concepts = self.staging.count("concepts", "state IN ('active', 'weak')")
        self.report.evidence_total = self.staging.count("evidence")
        failed = self.report.nothing_succeeded()
        if failed is not None:
            self.staging.finish_run(run, "failed", self.report.as_dict(), error=failed.message)
            raise failed
        self.staging.finish_run(run, "completed", self.report.as_dict())
        return self.report

    def _config(self) -> dict[str, Any]:
        s = self.settings
        return {
            "extractor": getattr(self._extractor, "label", None),
            "offline": self._offline if self._offline is not None else s.offline,
            "model": s.llm_model, "embedder": s.embedder,
            "segment_max_tokens": s.segment_max_tokens,
            "thresholds": [s.mapper_alias_threshold, s.mapper_fuzzy_threshold,
                           s.mapper_embedding_threshold, s.mapper_embedding_min_fuzzy,
                           s.mapper_min_quote_chars],
            "schema": schema_hash(strict_json_schema(ExtractionResult)),
        }

    def _batch_out(self, works: Iterator[SegmentWork], path: Path | str) -> None:
        from pipeline.llm import write_batch_input

        self.report.extractor = "batch"
        self.report.batch_written = write_batch_input(
            (work.request for work in works), self.settings, path
        )

    def _extract_all(self, run: Run, works: Iterator[SegmentWork], batch_in: Path | str | None,
                     progress: bool, total: int) -> None:
        from pipeline.embeddings import build_embedder

        mapper = SemanticMapper(self.repo, build_embedder(self.settings, self.staging),
                                self.settings)
        outcomes, label, call_id = self._outcomes(run, works, batch_in)
        self.report.extractor = label
        with _progress(progress, total) as advance:
            for work, outcome in outcomes:
                self._commit(run, mapper, work, outcome, label, call_id(work))
                advance()
        step = getattr(self._active, "structured_output", None)
        self.report.structured_output = step if isinstance(step, str) else None

    def _outcomes(
        self, run: Run, works: Iterator[SegmentWork], batch_in: Path | str | None
    ) -> tuple[Iterator[tuple[SegmentWork, Outcome]], str, Callable[[SegmentWork], str | None]]:
        if batch_in is not None:
            return _batch_outcomes(self.staging, run, works, batch_in), "batch", lambda _: None
        extractor = self._extractor or build_extractor(
            self.settings, self.staging, run, self._offline, self.closing
        )
        workers = self.settings.llm_concurrency if extractor.label.startswith("llm:") else 1
        self._active = extractor
        outcomes = _run_extractor(extractor, works, workers)
        return outcomes, extractor.label, lambda work: work.call_id

    def _commit(self, run: Run, mapper: SemanticMapper, work: SegmentWork, outcome: Outcome,
                label: str, call_id: str | None) -> None:
        segment_id = work.request.segment_id
        with transaction(self.staging.db):
            if isinstance(outcome, ExtractionFailed):
                self.segments.mark(segment_id, "failed")
                self.report.segments_failed += 1
                self.report.llm_failures[outcome.error_class] += 1
                self.report.llm_failure_details[outcome.error_class] = outcome.detail
                stage_receipt(self.staging.db, run, "extract", segment_id, None)
                return
            inputs = self._store_extraction(run, work, outcome, label, call_id)
            tally = MappingTally()
            if inputs:
                tally = mapper.map_extraction(inputs, run.provenance("mapper"), work.scope())
                self.report.mapping.add(tally)
            self.segments.mark(segment_id, "extracted" if work.request.messages else "skipped")
            stage_receipt(self.staging.db, run, "extract", segment_id, outcome)
            stage_receipt(self.staging.db, run, "map", stable_id("ex", segment_id, label), tally)
        if work.request.messages:
            self.report.segments_done += 1
        else:
            self.report.segments_skipped += 1

    def _store_extraction(self, run: Run, work: SegmentWork, result: ExtractionResult,
                          label: str, call_id: str | None) -> list[MappingInput]:
        request = work.request
        prov = run.provenance(f"extract:{label}")
        extraction_id = stable_id("ex", request.segment_id, label)
        self.repo.add_extraction(
            extraction_id, request.segment_id, label, call_id,
            schema_hash(strict_json_schema(ExtractionResult)), result.model_dump_json(),
            [m.message_id for m in request.messages], prov,
        )
        inputs: list[MappingInput] = []
        rows: list[MentionRow] = []
        for ordinal, mention in enumerate(result.mentions):
            check = verify_mention(mention, request, self.settings.mapper_min_quote_chars)
            mention_id = stable_id("mn", extraction_id, ordinal)
            rows.append(MentionRow(
                mention_id, extraction_id, ordinal, mention.title, mention.type,
                mention.description, mention.quote, check.message_id or mention.message_ref,
                check.start, check.end, check.verified, check.reason,
                [relation.model_dump() for relation in mention.relations],
            ))
            message = work.messages.get(check.message_id or "")
            inputs.append(MappingInput(
                mention_id, mention, check, message.source_id if message else None,
                message.created_at if message else None,
            ))
            self.report.mentions += 1
            self.report.verified += int(check.verified)
            if not check.verified:
                self.report.rejected[check.reason or "unknown"] += 1
        self.repo.add_mentions(rows, prov)
        return inputs


def _run_extractor(
    extractor: Extractor, works: Iterator[SegmentWork], workers: int
) -> Iterator[tuple[SegmentWork, Outcome]]:
    """Outcomes in submission order (so mapping is deterministic), ``workers`` calls in flight."""

    def call(work: SegmentWork) -> Outcome:
        if not work.request.messages:
            return ExtractionResult(mentions=[])
        try:
            result: Outcome = extractor.extract(work.request)
        except ExtractionFailed as failed:
            result = failed
        work.call_id = getattr(extractor, "last_call_id", None)
        return result

    if workers <= 1:
        for work in works:
            yield work, call(work)
        return
    window: deque[tuple[SegmentWork, Future[Outcome]]] = deque()
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="extract") as pool:
        try:
            for work in works:
                window.append((work, pool.submit(call, work)))
                if len(window) >= 2 * workers:
                    done, future = window.popleft()
                    yield done, future.result()
            while window:
                done, future = window.popleft()
                yield done, future.result()
        finally:
            for _, future in window:
                future.cancel()


def _batch_outcomes(staging: StagingStore, run: Run, works: Iterator[SegmentWork],
                    path: Path | str) -> Iterator[tuple[SegmentWork, Outcome]]:
    from pipeline.llm import LLMCallLog, read_batch_output

    by_id = {work.request.segment_id: work for work in works}
    requests = {segment_id: work.request for segment_id, work in by_id.items()}
    with LLMCallLog(staging, run) as log:
        for segment_id, outcome in read_batch_output(path, requests, log):
            yield by_id[segment_id], outcome


class _progress:
    """A rich progress bar when enabled; otherwise a no-op ``advance``."""

    def __init__(self, enabled: bool, total: int) -> None:
        self.enabled, self.total = enabled, total
        self._bar: Any = None

    def __enter__(self) -> Callable[[], None]:
        if not self.enabled:
            return lambda: None
        from rich.console import Console
        from rich.progress import Progress

        self._bar = Progress(console=Console(stderr=True), transient=True)
        self._bar.start()
        task = self._bar.add_task("extracting segments", total=self.total)
        return lambda: self._bar.advance(task)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

