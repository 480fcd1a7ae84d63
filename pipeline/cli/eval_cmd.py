"""`conceptmem eval locomo FILE` (and longmemeval): recall of every route, side by side."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from pipeline import evaluation
from pipeline.cli.app import settings_from
from pipeline.errors import ConfigurationError
from pipeline.retrieval import ROUTES

group = typer.Typer(help="Measure retrieval against benchmark files.", no_args_is_help=True)
Ks = Annotated[str, typer.Option("--k", help="Cut-offs, comma-separated.")]
JsonOut = Annotated[Path | None, typer.Option("--json", help="Write the figures as JSON here.")]
Routes = Annotated[list[str] | None, typer.Option("--route", help="Route(s) to measure.")]


def register(app: typer.Typer) -> None:
    app.add_typer(group, name="eval")


def _ks(text: str) -> list[int]:
    try:
        ks = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError as exc:
        raise ConfigurationError(f"--k must be integers, got {text!r}", "e.g. --k 5,10,25") from exc
    if not ks or ks[0] <= 0:
        raise ConfigurationError(f"--k must be positive integers, got {text!r}", "e.g. --k 10")
    return ks


def _run(ctx: typer.Context, kind: str, path: Path, ks: str, json_out: Path | None,
         routes: list[str] | None) -> None:
    console = Console(stderr=True)

    def say(msg: str) -> None:
        console.print(escape(msg), highlight=False)

    with tempfile.TemporaryDirectory(prefix="conceptmem-eval-") as tmp:
        overrides = {} if (ctx.obj or {}).get("store") else {"store": Path(tmp)}
        settings = settings_from(ctx, **overrides)
        run = evaluation.evaluate_locomo if kind == "locomo" else evaluation.evaluate_longmemeval
        report = run(settings, path, _ks(ks), tuple(routes or ROUTES), say=say)
    out = Console(width=max(Console().width, 132))
    out.print(evaluation.report_table(report))
    out.print(evaluation.report_table(report, "recall_all"))
    out.print(evaluation.report_table(report, "session_recall"))
    if json_out is not None:
        json_out.write_text(json.dumps(report.as_json(), indent=2, sort_keys=True) + "\n")
        say(f"wrote {json_out}")


@group.command("locomo")
def locomo(ctx: typer.Context, path: Path, k: Ks = "5,10,25,50", json_out: JsonOut = None,
           route: Routes = None) -> None:
    """Turn- and session-level recall on a LoCoMo file, each question in its conversation."""
    _run(ctx, "locomo", path, k, json_out, route)


@group.command("longmemeval")
def longmemeval(ctx: typer.Context, path: Path, k: Ks = "5,10,25,50",
                json_out: JsonOut = None, route: Routes = None) -> None:
    """Turn- and session-level recall and NDCG on a LongMemEval file (official format)."""
    _run(ctx, "longmemeval", path, k, json_out, route)
