"""`conceptmem doctor`: classify the store, each run and each unit (seed 000's states).

Precedence, highest first: scope_conflict > source_at_risk > stale > promotion_missing >
unverified > uncertain > degraded > waiting > healthy; a later success never hides an
earlier problem. Pending work is ``waiting``, not failed; a lookup path that misses what an
exact list still holds is ``degraded``, not lost; a deleted item still visible on a read path
(the graph) is ``stale`` with reason ``deleted_still_visible``. Every finding is content-free:
a state, a unit kind and id, a reason code and a count. The SQLite checks run on read-only
connections; the graph check compares each synced backend with what SQLite projects.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pipeline import __version__
from pipeline.health._checks import SQL_CHECKS, pid_alive
from pipeline.health._classify import EXIT_CODES, PRECEDENCE, Finding, classify, worst
from pipeline.settings import Settings
from staging import SourceStore, StagingStore
from staging.errors import StoreNotFound

__all__ = ["EXIT_CODES", "PRECEDENCE", "DoctorReport", "Finding", "diagnose", "pid_alive",
           "worst"]


@dataclass
class DoctorReport:
    state: str
    findings: list[Finding] = field(default_factory=list)
    runs: dict[str, str] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    checked_at: str = ""

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.state]

    def as_dict(self) -> dict[str, object]:
        return {"state": self.state, "exit_code": self.exit_code, "precedence": PRECEDENCE,
                "checked_at": self.checked_at, "runs": self.runs, "units": self.units,
                "findings": [f.as_dict() for f in self.findings]}

    def summary(self) -> str:
        lines = [f"store: {self.state} (exit {self.exit_code})"]
        for f in sorted(self.findings, key=lambda f: (PRECEDENCE.index(f.state), f.kind)):
            lines.append(f"  {f.state}: {f.kind} {f.unit}: {f.reason} ({f.count})")
        return "\n".join(lines)


def _readonly(settings: Settings) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{settings.staging_db}?mode=ro", uri=True)
    conn.execute("ATTACH DATABASE ? AS src", [f"file:{settings.source_db}?mode=ro"])
    return conn


def _graph_findings(settings: Settings, forgotten: set[str]) -> list[Finding]:
    from pipeline.sync import verify_store

    staging = StagingStore.open(settings.staging_db)
    try:
        backends = [r[0] for r in staging.db.execute(
            "SELECT DISTINCT backend FROM sync_receipts WHERE status = 'completed'")]
        has_concepts = staging.count("concepts") > 0
    finally:
        staging.close()
    if not backends:
        return [Finding("waiting", "graph", "none", "not_synced_yet")] if has_concepts else []
    found = []
    for backend in sorted(backends):
        if backend == "embedded" and not settings.graph_path.exists():
            found.append(Finding("stale", "graph", backend, "graph_missing"))
            continue
        try:
            report = verify_store(settings, backend)
        except Exception:  # unreachable or locked: committed, but not checkable now
            found.append(Finding("unverified", "graph", backend, "graph_unreachable"))
            continue
        for drift in report.drift:
            visible = [i for i in drift.extra if i in forgotten]
            if visible:
                found.append(Finding("stale", "graph", backend, "deleted_still_visible",
                                     len(visible)))
            found.append(Finding("stale", "graph", f"{backend}:{drift.kind}", "graph_drift",
                                 drift.n_missing + drift.n_extra + drift.n_changed))
    return found


def diagnose(settings: Settings, now: datetime | None = None, graph: bool = True,
             code_version: str = __version__) -> DoctorReport:
    """Run every check and classify (see the module docstring)."""
    if not settings.source_db.exists():
        raise StoreNotFound(f"no source database in {settings.store}",
                            "check --store, or run `conceptmem run PATH...` first")
    now = now or datetime.now(UTC)
    SourceStore.open(settings.source_db).close()  # migrations, so the checks' tables exist
    StagingStore.open(settings.staging_db).close()
    conn = _readonly(settings)
    try:
        findings = [f for check in SQL_CHECKS for f in check(conn, now, code_version)]
        forgotten = {r[0] for r in conn.execute("SELECT id FROM forgotten")}
    finally:
        conn.close()
    if graph:
        findings += _graph_findings(settings, forgotten)
    state, runs, units = classify(findings)
    return DoctorReport(state, findings, runs, units, now.isoformat())
