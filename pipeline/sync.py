"""Project the source and staging databases into the graph; verify the graph against them.

A sync compares each projected row's content hash with the ``row_hash`` stored on the graph:
new and changed rows are written, rows gone from SQLite are removed, unchanged rows are not
touched, so a second sync writes nothing. An empty graph (first sync, ``--rebuild``) is bulk
loaded. Edges whose end nodes are not projected are skipped and counted as ``dangling``.
Every sync records a run and a receipt (counts per label and type, status, times) in staging.
"""

from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from graph import EDGE_TYPES, NODE_LABELS, SCHEMA, GraphStore, GraphUnavailable, Row, open_graph
from pipeline.settings import Settings
from staging import SourceStore, StagingStore
from staging.errors import StoreNotFound
from staging.lock import require_store, writes_store
from staging.projection import Projection, project
from staging.receipts import finish_receipt, start_receipt

__all__ = ["Drift", "SyncReport", "VerifyReport", "project_store", "sync_store", "verify_store"]

_SAMPLE = 10


@dataclass
class SyncReport:
    backend: str
    target: str
    rebuild: bool
    bulk: bool
    receipt_id: str
    seconds: float
    written: dict[str, int] = field(default_factory=dict)
    deleted: dict[str, int] = field(default_factory=dict)
    dangling: dict[str, int] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def rows_written(self) -> int:
        return sum(self.written.values()) + sum(self.deleted.values())

    def summary(self) -> str:
        nodes = sum(self.counts.get(k, 0) for k in NODE_LABELS)
        edges = sum(self.counts.get(k, 0) for k in EDGE_TYPES)
        mode = "rebuilt" if self.rebuild else "bulk-loaded" if self.bulk else "synced"
        return (f"{mode} {self.backend} graph {self.target}: {nodes} nodes, {edges} edges; "
                f"{sum(self.written.values())} rows written, {sum(self.deleted.values())} "
                f"removed in {self.seconds:.2f} s")


@dataclass(frozen=True)
class Drift:
    """How one label or edge type differs between SQLite and the graph (ids sampled)."""

    kind: str
    expected: int
    actual: int
    missing: tuple[str, ...]
    extra: tuple[str, ...]
    changed: tuple[str, ...]
    n_missing: int
    n_extra: int
    n_changed: int


@dataclass
class VerifyReport:
    backend: str
    target: str
    expected: dict[str, int]
    actual: dict[str, int]
    drift: list[Drift]
    dangling: dict[str, int] = field(default_factory=dict)
    """Edges in SQLite whose end node is not there (never projected; not drift)."""

    @property
    def ok(self) -> bool:
        return not self.drift


def _code_version() -> str:
    try:
        return metadata.version("conceptmem")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def _open_stores(settings: Settings) -> tuple[SourceStore, StagingStore]:
    require_store(settings.store)
    if not settings.source_db.exists():
        raise StoreNotFound(
            f"{settings.source_db}: no source database in store {settings.store}",
            "run `conceptmem ingest PATH` (or `conceptmem run PATH`) first",
        )
    return SourceStore.open(settings.source_db), StagingStore.open(settings.staging_db)


def project_store(source: SourceStore, staging: StagingStore) -> tuple[Projection, dict[str, int]]:
    """All rows per kind, with edges whose end nodes are not projected removed (and counted)."""
    rows = project(source.db, staging.db)
    node_ids = {label: {r["id"] for r in rows[label]} for label in NODE_LABELS}
    dangling: dict[str, int] = {}
    for edge_type in EDGE_TYPES:
        spec = SCHEMA.edges[edge_type]
        src_ids, dst_ids = node_ids[spec.src_label], node_ids[spec.dst_label]
        kept = [r for r in rows[edge_type] if r["src"] in src_ids and r["dst"] in dst_ids]
        dangling[edge_type] = len(rows[edge_type]) - len(kept)
        rows[edge_type] = kept
    return rows, dangling


Say = Callable[[str], None]


Plan = dict[str, tuple[list[str], list[str], list[dict[str, Any]]]]
"""Per kind: (stale ids to remove, changed ids, rows to write)."""


def _plan(graph: GraphStore, rows: Projection) -> Plan:
    plans: Plan = {}
    for kind in SCHEMA.kinds():
        current = graph.hashes(kind)
        desired = {r["id"]: r for r in rows[kind]}
        stale = sorted(set(current) - set(desired))
        changed = sorted(
            i for i, r in desired.items() if current.get(i, r["row_hash"]) != r["row_hash"]
        )
        upserts = [r for i, r in desired.items() if current.get(i) != r["row_hash"]]
        plans[kind] = (stale, changed, upserts)
    return plans


def _apply_diff(graph: GraphStore, plans: Plan, report: SyncReport, say: Say) -> None:
    for edge_type in EDGE_TYPES:  # stale and changed edges go first (their ends may change)
        stale, changed, _ = plans[edge_type]
        graph.delete_edges(edge_type, stale + changed)
        report.deleted[edge_type] = len(stale)
    for label in NODE_LABELS:  # new nodes are inserted in bulk, changed ones updated in place
        stale, changed, upserts = plans[label]
        graph.delete_nodes(label, stale)
        report.deleted[label] = len(stale)
        known = set(changed)
        graph.bulk_load({label: [r for r in upserts if r["id"] not in known]}, {})
        graph.upsert_nodes(label, [r for r in upserts if r["id"] in known])
        report.written[label] = len(upserts)
        say(f"{label}: {len(upserts)} written, {len(stale)} removed")
    for edge_type in EDGE_TYPES:  # every edge to write is absent by now: bulk insert
        _, _, upserts = plans[edge_type]
        graph.bulk_load({}, {edge_type: upserts})
        report.written[edge_type] = len(upserts)
        say(f"{edge_type}: {len(upserts)} written, {report.deleted[edge_type]} removed")


def _choose(graph: GraphStore, rows: Projection, rebuild: bool) -> Plan | None:
    """The diff to apply, or None to reload: on --rebuild, an empty graph, or when more than
    half of the rows would be written (a bulk reload is then faster than diffing)."""
    total = sum(len(kind_rows) for kind_rows in rows.values())
    if rebuild or sum(graph.counts().values()) * 2 < total:
        return None
    plans = _plan(graph, rows)
    writes = sum(len(stale) + len(upserts) for stale, _, upserts in plans.values())
    return None if writes * 2 > total else plans


def _bulk(graph: GraphStore, rows: Projection, report: SyncReport, say: Say) -> None:
    graph.delete_all()
    graph.bulk_load({k: rows[k] for k in NODE_LABELS}, {k: rows[k] for k in EDGE_TYPES})
    for kind in SCHEMA.kinds():
        report.written[kind] = len(rows[kind])
        report.deleted[kind] = 0
    say(f"bulk-loaded {sum(report.written.values())} rows")


@writes_store("sync")
def sync_store(
    settings: Settings, backend: str | None = None, rebuild: bool = False, progress: bool = False
) -> SyncReport:
    """Bring the graph in line with SQLite; ``rebuild`` drops it and reprojects everything."""
    name = backend or settings.graph_backend
    source, staging = _open_stores(settings)
    started = time.perf_counter()

    def say(text: str) -> None:
        if progress:
            print(f"  sync: {text}", file=sys.stderr)

    run = staging.start_run("sync", {"backend": name, "rebuild": rebuild}, _code_version(),
                            settings.user_scope, settings.assistant_scope)
    try:
        graph = _open_for_sync(settings, name, rebuild, say)
    except BaseException as exc:
        staging.finish_run(run, "failed", error=str(exc))
        source.close()
        staging.close()
        raise
    receipt = start_receipt(staging.db, run, name, graph.target)
    report = SyncReport(name, graph.target, rebuild, False, receipt, 0.0)
    try:
        _project_and_write(graph, source, staging, report, say)
        report.seconds = round(time.perf_counter() - started, 3)
        summary = {"target": graph.target, "written": report.written, "deleted": report.deleted,
                   "dangling": report.dangling, "graph": report.counts, "bulk": report.bulk}
        finish_receipt(staging.db, receipt, "completed", summary)
        staging.finish_run(run, "completed", {"rows_written": report.rows_written})
    except BaseException as exc:
        finish_receipt(staging.db, receipt, "failed", {"target": graph.target, "error": str(exc)})
        staging.finish_run(run, "failed", error=str(exc))
        raise
    finally:
        graph.close()
        source.close()
        staging.close()
    return report


def _open_for_sync(settings: Settings, name: str, rebuild: bool, say: Say) -> GraphStore:
    """The graph to write; on ``rebuild``, an embedded graph file that cannot be opened (it is
    derived data) is moved aside to ``graph.lbug.broken`` and a new one is built."""
    try:
        return open_graph(settings, name)
    except GraphUnavailable:
        path = settings.graph_path
        if not (rebuild and name == "embedded" and path.exists()):
            raise
    for extra in sorted(path.parent.glob(path.name + ".*")):  # its WAL and shadow files
        if not extra.name.endswith(".broken"):
            extra.replace(extra.with_name(extra.name + ".broken"))
    path.replace(path.with_name(path.name + ".broken"))
    say(f"{path} could not be opened: moved aside to {path.name}.broken, rebuilding")
    return open_graph(settings, name)


def _project_and_write(
    graph: GraphStore, source: SourceStore, staging: StagingStore, report: SyncReport, say: Say
) -> None:
    rows, report.dangling = project_store(source, staging)
    plans = _choose(graph, rows, report.rebuild)
    report.bulk = plans is None
    if plans is None:  # COPY commits per table; the next sync repairs a failed reload
        _bulk(graph, rows, report, say)
    else:
        with graph.batch():
            _apply_diff(graph, plans, report, say)
    report.counts = graph.counts()


def _drift(kind: str, desired: dict[str, str], current: dict[str, str]) -> Drift | None:
    missing = sorted(set(desired) - set(current))
    extra = sorted(set(current) - set(desired))
    changed = sorted(i for i in desired if i in current and current[i] != desired[i])
    if not (missing or extra or changed):
        return None
    return Drift(kind, len(desired), len(current), tuple(missing[:_SAMPLE]),
                 tuple(extra[:_SAMPLE]), tuple(changed[:_SAMPLE]),
                 len(missing), len(extra), len(changed))


def _normal(value: Any, kind: str) -> Any:
    if value is None:
        return None
    if kind == "DOUBLE":
        return float(value)
    if kind == "INT64":
        return int(value)
    return bool(value) if kind == "BOOLEAN" else str(value)


def fingerprints(kind: str, rows: Iterable[Row]) -> dict[str, str]:
    """``id -> hash`` of every property (as its declared type), ``row_hash`` and edge ends.

    Computed the same way from SQLite's projection and from the graph's stored properties, so
    a property changed in the graph alone (``SET e.quote = 'forged'``) is drift even though
    the stored ``row_hash`` still matches.
    """
    spec = SCHEMA.nodes.get(kind) or SCHEMA.edges[kind]
    ends = ("src", "dst") if kind in SCHEMA.edges else ()
    found: dict[str, str] = {}
    for row in rows:
        values = (*(row.get(end) for end in ends),
                  *(_normal(row.get(name), type_) for name, type_ in spec.properties))
        found[str(row["id"])] = hashlib.blake2b(repr(values).encode("utf-8"),
                                                digest_size=16).hexdigest()
    return found


def verify_store(settings: Settings, backend: str | None = None) -> VerifyReport:
    """Compare every graph row's ids and property content with what SQLite projects."""
    source, staging = _open_stores(settings)
    try:
        graph = open_graph(settings, backend, read_only=True)
    except BaseException:
        source.close()
        staging.close()
        raise
    try:
        rows, dangling = project_store(source, staging)
        report = VerifyReport(graph.backend, graph.target, {}, {}, [], dangling)
        for kind in SCHEMA.kinds():
            desired = fingerprints(kind, rows[kind])
            current = fingerprints(kind, graph.rows(kind))
            report.expected[kind], report.actual[kind] = len(desired), len(current)
            drift = _drift(kind, desired, current)
            if drift is not None:
                report.drift.append(drift)
        return report
    finally:
        graph.close()
        source.close()
        staging.close()
