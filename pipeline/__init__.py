"""Orchestration: importers, stages and the CLI. The only place that wires concrete parts."""

__version__ = "0.1.0"
