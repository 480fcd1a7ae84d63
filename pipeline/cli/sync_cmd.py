"""`conceptmem sync` and `conceptmem verify`."""

from __future__ import annotations

import dataclasses
import json
from enum import StrEnum
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from pipeline.cli.app import settings_from
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
    table = Table("label / type", "written", "removed", "in graph",
                  title=f"sync {report.backend} -> {report.target} ({report.seconds:.2f} s)")
    for kind, total in report.counts.items():
        table.add_row(kind, str(report.written.get(kind, 0)), str(report.deleted.get(kind, 0)),
                      str(total))
    Console(stderr=True).print(table)
    skipped = {k: v for k, v in report.dangling.items() if v}
    if skipped:
        Console(stderr=True).print(f"skipped edges with a missing end node: {skipped}")


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
        typer.echo(json.dumps(payload, sort_keys=True))
    else:
        table = Table("label / type", "sqlite", "graph", "missing", "extra", "changed",
                      title=f"verify {report.backend} {report.target}")
        drift = {d.kind: d for d in report.drift}
        for kind, expected in report.expected.items():
            d = drift.get(kind)
            table.add_row(kind, str(expected), str(report.actual[kind]),
                          *(str(x) for x in ((d.n_missing, d.n_extra, d.n_changed) if d
                                             else (0, 0, 0))))
        Console().print(table)
        Console().print("in sync" if report.ok else f"drift in {', '.join(drift)}")
    if not report.ok:
        raise typer.Exit(1)
