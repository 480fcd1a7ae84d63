"""Ingestion (issue #2): written by the importers work."""

from __future__ import annotations
