"""The eval table: every route side by side per k and category, with reference rows."""

from __future__ import annotations

from rich.table import Table

from pipeline.evaluation.harness import MAIN_GROUP, EvalReport

__all__ = ["LOCOMO_REFERENCE", "REFERENCE_NOTE", "report_table"]

# LoCoMo paper (Maharana et al., ACL 2024), Table 3, DRAGON over dialog turns, all 10
# conversations, as quoted in issue 8: turn-level recall@10. Printed for reference only.
LOCOMO_REFERENCE = {"DRAGON (paper)": {10: 0.662}}
REFERENCE_NOTE = ("DRAGON (paper): LoCoMo paper Table 3, DRAGON over dialog turns, all 10"
                  " conversations (not this file); reference only")


def report_table(report: EvalReport, metric: str = "recall_any") -> Table:
    """One row per route: the metric at each k (headline group), then @10 per category."""
    k10 = 10 if 10 in report.ks else report.ks[0]
    cats = report.categories()
    title = (f"{report.dataset}: {metric} ({report.questions} headline questions;"
             f" per category @{k10})")
    table = Table(title=title)
    if report.dataset.startswith("locomo") and metric == "recall_any":
        table.caption = REFERENCE_NOTE
    table.add_column("route")
    for k in report.ks:
        table.add_column(f"@{k}", justify="right")
    for cat in cats:
        table.add_column(f"cat {cat}", justify="right")
    for route, tally in report.tallies.items():
        cells = [f"{tally.mean(MAIN_GROUP, k, metric):.3f}" for k in report.ks]
        cells += [f"{tally.mean(c, k10, metric):.3f}" for c in cats]
        table.add_row(route, *cells)
    if report.dataset.startswith("locomo") and metric == "recall_any":
        for name, values in LOCOMO_REFERENCE.items():
            table.add_row(f"[dim]{name}[/]", *[f"{values[k]:.3f}" if k in values else ""
                                               for k in report.ks], *["" for _ in cats])
    return table
