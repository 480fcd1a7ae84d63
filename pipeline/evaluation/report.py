"""The eval table as plain data: every route side by side per k and category, with references."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.evaluation.harness import MAIN_GROUP, EvalReport

__all__ = ["LOCOMO_REFERENCE", "REFERENCE_NOTE", "ReportTable", "report_table"]

# LoCoMo paper (Maharana et al., ACL 2024), Table 3, DRAGON over dialog turns, all 10
# conversations, as quoted in issue 8: turn-level recall@10. Printed for reference only.
LOCOMO_REFERENCE = {"DRAGON (paper)": {10: 0.662}}
REFERENCE_NOTE = ("DRAGON (paper): LoCoMo paper Table 3, DRAGON over dialog turns, all 10"
                  " conversations (not this file); reference only")


@dataclass(frozen=True)
class ReportTable:
    title: str
    columns: list[str]
    rows: list[list[str]]
    note: str = ""


def report_table(report: EvalReport, metric: str = "recall_any") -> ReportTable:
    """One row per route: the metric at each k (headline group), then @10 per category."""
    k10 = 10 if 10 in report.ks else report.ks[0]
    cats = report.categories()
    title = (f"{report.dataset}: {metric} ({report.questions} headline questions;"
             f" per category @{k10})")
    columns = ["route", *[f"@{k}" for k in report.ks], *[f"cat {c}" for c in cats]]
    rows = []
    for route, tally in report.tallies.items():
        cells = [f"{tally.mean(MAIN_GROUP, k, metric):.3f}" for k in report.ks]
        cells += [f"{tally.mean(c, k10, metric):.3f}" for c in cats]
        rows.append([route, *cells])
    note = ""
    if report.dataset.startswith("locomo") and metric == "recall_any":
        note = REFERENCE_NOTE
        for name, values in LOCOMO_REFERENCE.items():
            rows.append([name, *[f"{values[k]:.3f}" if k in values else "" for k in report.ks],
                         *["" for _ in cats]])
    return ReportTable(title, columns, rows, note)
