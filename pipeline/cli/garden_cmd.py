"""`conceptmem garden`."""

from __future__ import annotations

from typing import Annotated

import typer

from pipeline.cli.app import settings_from
from pipeline.cli.output import emit
from pipeline.garden import check_trials, garden_store, parse_params, revert_store, summary_lines


def register(app: typer.Typer) -> None:
    app.command("garden")(garden)


def garden(
    ctx: typer.Context,
    trials: Annotated[int | None, typer.Option("--trials", help="Optuna trials.")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed for sampling and UMAP.")] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the plans; store and apply nothing.")
    ] = False,
    param: Annotated[
        list[str] | None,
        typer.Option("--param", help="Pin a clustering parameter, e.g. min_cluster_size=20."),
    ] = None,
    recluster: Annotated[
        bool, typer.Option("--recluster",
                           help="Re-cluster topics even when few concepts changed.")
    ] = False,
    reassign_outliers: Annotated[
        bool, typer.Option("--reassign-outliers",
                           help="Move outliers within a topic's radius into it (recorded).")
    ] = False,
    revert: Annotated[
        str | None, typer.Option("--revert", help="Undo an applied plan (e.g. unmerge) by id.")
    ] = None,
) -> None:
    """Merge, split, decay, invalidate and re-cluster topics: plan, check, then apply."""
    if revert is not None:
        plan = revert_store(settings_from(ctx), revert)
        emit(f"reverted {plan.step} plan {plan.id} ({len(plan.changes)} rows restored)")
        return
    check_trials(trials)
    report = garden_store(
        settings_from(ctx), dry_run=dry_run, trials=trials, seed=seed,
        pinned=parse_params(param or []) or None, recluster=recluster,
        reassign_outliers=reassign_outliers,
    )
    for line in summary_lines(report):
        emit(line)
