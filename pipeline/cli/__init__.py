"""Thin command-line interface over the pipeline library."""

from pipeline.cli.app import app, main

__all__ = ["app", "main"]
