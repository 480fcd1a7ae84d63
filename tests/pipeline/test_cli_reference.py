"""Every command is documented: docs/cli.md is exactly what the commands say of themselves."""

from __future__ import annotations

from pathlib import Path

from pipeline.cli.app import app
from pipeline.cli.reference import cli_reference

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_cli_reference_is_current() -> None:
    expected = cli_reference(app)
    assert DOCS.read_text(encoding="utf-8") == expected, (
        "docs/cli.md is stale: run `.venv/bin/python -m pipeline.cli.reference > docs/cli.md`"
    )


def test_every_command_has_help_text() -> None:
    text = cli_reference(app)
    for name in ("ingest", "stats"):
        assert f"## `conceptmem {name}`" in text.replace("###", "##")
