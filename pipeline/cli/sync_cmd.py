"""`conceptmem sync` and `conceptmem verify`."""

from __future__ import annotations

import dataclasses
from enum import StrEnum
from typing import Annotated

import typer

from pipeline.cli.app import settings_from
from pipeline.cli.output import console, emit, emit_json, say, table
from pipeline.sync import sync_store, verify_store


class BackendName(StrEnum):
    embedded = "embedded"
    neo4j = "neo4j"


Backend = Annotated[
    BackendName | None,
    typer.Option("--backend", help="embedded (default) or neo4j; overrides the settings."),
]


def register(app: typer.Typer) -> None:
    app.command("sync")(sync)
    app.command("verify")(verify)


def sync(
    ctx: typer.Context,
    backend: Backend = None,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Drop the graph and reproject everything.")
    ] = False,
) -> None:
    """Project the source and staging databases into the graph (idempotent, incremental)."""
    settings = settings_from(ctx, graph_backend=backend.value if backend else None)
    report = sync_store(settings, rebuild=rebuild, progress=True)
    rows = [(kind, report.written.get(kind, 0), report.deleted.get(kind, 0), total)
            for kind, total in report.counts.items()]
    title = f"sync {report.backend} -> {report.target} ({report.seconds:.2f} s)"
    console(stderr=True).print(table(title, ("label / type", "written", "removed", "in graph"),
                                     rows))
    skipped = {k: v for k, v in report.dangling.items() if v}
    if skipped:
        say(f"skipped edges with a missing end node: {skipped}")


def verify(
    ctx: typer.Context,
    backend: Backend = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Compare graph ids and content hashes with SQLite, per label and type; exit 1 on drift."""
    report = verify_store(settings_from(ctx, graph_backend=backend.value if backend else None))
    if as_json:
        payload = {"backend": report.backend, "target": report.target, "ok": report.ok,
                   "expected": report.expected, "actual": report.actual,
                   "drift": [dataclasses.asdict(d) for d in report.drift],
                   "dangling": report.dangling}
        emit_json(payload)
    else:
        drift = {d.kind: d for d in report.drift}
        rows = [(kind, expected, report.actual[kind],
                 *((d.n_missing, d.n_extra, d.n_changed) if (d := drift.get(kind)) else (0, 0, 0)))
                for kind, expected in report.expected.items()]
        columns = ("label / type", "sqlite", "graph", "missing", "extra", "changed")
        console().print(table(f"verify {report.backend} {report.target}", columns, rows))
        emit("in sync" if report.ok else f"drift in {', '.join(drift)}")
    if not report.ok:
        say("hint: the graph is derived data: `conceptmem sync --rebuild` reprojects it", "dim")
    if not report.ok:
        raise typer.Exit(1)
