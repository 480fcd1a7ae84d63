"""`conceptmem run`: the whole pipeline as an ordered list of stages.

Each stage takes the settings and the run's options and returns a report with ``summary()``.
To add a stage (sync from #4, garden from #5), append ONE line to ``STAGES``, e.g.::

    Stage("sync", lambda settings, options: sync_store(settings, progress=options.progress)),
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pipeline.extract import extract_store
from pipeline.forget import compact_expired
from pipeline.garden import garden_store
from pipeline.ingest import ingest_paths
from pipeline.settings import Settings
from pipeline.sync import sync_store
from staging.lock import writes_store

__all__ = ["STAGES", "RunOptions", "RunReport", "Stage", "StageReport", "run_pipeline"]


class StageReport(Protocol):
    def summary(self) -> str: ...


@dataclass(frozen=True)
class RunOptions:
    """What `conceptmem run` was asked to do, handed to every stage."""

    paths: tuple[Path, ...] = ()
    format_name: str | None = None
    offline: bool | None = None
    progress: bool = False


@dataclass(frozen=True)
class Stage:
    name: str
    run: Callable[[Settings, RunOptions], StageReport]


def _ingest(settings: Settings, options: RunOptions) -> StageReport:
    return ingest_paths(
        settings, list(options.paths), format_name=options.format_name, progress=options.progress
    )


def _extract(settings: Settings, options: RunOptions) -> StageReport:
    return extract_store(settings, offline=options.offline, progress=options.progress)


# The pipeline, in order. Later issues append their stage here (one line each).
STAGES: list[Stage] = [
    Stage("ingest", _ingest),
    Stage("extract", _extract),
    Stage("garden", lambda settings, options: garden_store(settings)),
    Stage("sync", lambda settings, options: sync_store(settings, progress=options.progress)),
    Stage("compact", lambda settings, options: compact_expired(settings)),  # retention expiry
]


@dataclass
class RunReport:
    reports: list[tuple[str, StageReport]] = field(default_factory=list)

    def summary(self) -> str:
        return "\n".join(f"[{name}] {report.summary()}" for name, report in self.reports)


@writes_store("run", create=True)
def run_pipeline(
    settings: Settings,
    options: RunOptions,
    stages: Sequence[Stage] | None = None,
    on_stage: Callable[[str, StageReport], None] | None = None,
) -> RunReport:
    """Run the stages in order; a failing stage stops the run (each stage is resumable)."""
    report = RunReport()
    for stage in STAGES if stages is None else stages:
        result = stage.run(settings, options)
        report.reports.append((stage.name, result))
        if on_stage is not None:
            on_stage(stage.name, result)
    return report
