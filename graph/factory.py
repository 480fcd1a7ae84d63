"""Open the configured graph backend; engines are imported only when chosen."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from graph.errors import GraphError
from graph.protocol import GraphStore

__all__ = ["BACKENDS", "GraphSettings", "open_graph"]

BACKENDS = ("embedded", "neo4j")


class _Secret(Protocol):
    def get_secret_value(self) -> str: ...


class GraphSettings(Protocol):
    """The settings fields a backend needs (``pipeline.settings.Settings`` has them)."""

    @property
    def graph_backend(self) -> str: ...
    @property
    def graph_path(self) -> Path: ...
    @property
    def graph_buffer_pool_mb(self) -> int | None: ...
    @property
    def neo4j_uri(self) -> str: ...
    @property
    def neo4j_user(self) -> str: ...
    @property
    def neo4j_password(self) -> _Secret | None: ...
    @property
    def neo4j_database(self) -> str: ...


def open_graph(
    settings: GraphSettings, backend: str | None = None, *, read_only: bool = False
) -> GraphStore:
    """The graph store for ``backend`` (default: ``settings.graph_backend``), schema ensured.

    ``read_only`` opens it for reading only (the engine refuses writes; several readers and a
    writer may have it open at once); the schema is then neither created nor checked.

    Raises ``GraphUnavailable`` naming the install command when the engine's
    package is missing, or how to start/configure Neo4j when it cannot be reached.
    """
    name = backend or settings.graph_backend
    store: GraphStore
    if name == "embedded":
        from graph.ladybug_backend import LadybugGraph

        megabytes = settings.graph_buffer_pool_mb
        store = LadybugGraph(settings.graph_path, megabytes * 1024**2 if megabytes else None,
                             read_only=read_only)
    elif name == "neo4j":
        from graph.neo4j_backend import Neo4jGraph

        password = settings.neo4j_password
        store = Neo4jGraph(
            settings.neo4j_uri,
            settings.neo4j_user,
            password.get_secret_value() if password is not None else None,
            settings.neo4j_database,
            read_only=read_only,
        )
    else:
        raise GraphError(f"unknown graph backend: {name!r}", f"use one of: {', '.join(BACKENDS)}")
    if not read_only:
        store.ensure_schema()
    return store
