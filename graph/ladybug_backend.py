"""The embedded default: LadybugDB (the maintained fork of Kùzu), in-process, one file.

Facts this module relies on (measured): ``COPY`` is the fastest bulk load, so rebuilds write
one CSV per table and copy it; ``UNWIND $rows AS r MATCH (a:X {id: r.a}) MATCH (b:Y {id: r.b})
MERGE (a)-[e:T]->(b)`` is the fast incremental form (never the comma-joined ``MATCH (a), (b)``);
the maps of one UNWIND list need identical keys and values are CAST to the declared types
(a column of nulls is otherwise typed STRING). The fts/vector extensions download at run time,
so they are not used.
"""

from __future__ import annotations

import csv
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from operator import itemgetter
from pathlib import Path
from typing import Any

from graph.cypher_base import CypherGraph, spec_for
from graph.errors import GraphError, GraphUnavailable
from graph.model import SCHEMA, EdgeSpec, NodeSpec, Row

__all__ = ["LadybugGraph", "default_buffer_pool"]

BATCH = 5000


def default_buffer_pool() -> int:
    """Half of physical memory, at most 8 GiB: a 2.4M-edge COPY takes 3x longer with 2 GiB."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        physical = 4 * 1024**3
    return max(256 * 1024**2, min(8 * 1024**3, physical // 2))


def _columns(spec: NodeSpec | EdgeSpec) -> str:
    return ", ".join(f"`{name}` {kind}" for name, kind in spec.properties)


def _set_clause(var: str, spec: NodeSpec | EdgeSpec) -> str:
    return ", ".join(
        f"{var}.`{name}` = CAST(r.`{name}` AS {kind})" for name, kind in spec.properties
        if name != "id"
    )


def _write_csv(path: Path, rows: Sequence[Row], names: list[str]) -> None:
    """Rows as CSV the way LadybugDB reads them back: an empty unquoted field is NULL.

    ``csv`` writes None as an empty field, which is what NULL needs; an empty *string* would
    read back as NULL too, so rows holding one are never passed here (see ``bulk_load``).
    """
    with path.open("w", encoding="utf-8", newline="") as out:
        # "\r\n" ends rows so that the writer quotes any value holding "\r" or "\n".
        csv.writer(out, lineterminator="\r\n").writerows(
            [row[name] for name in names] for row in rows
        )


class LadybugGraph(CypherGraph):
    backend = "embedded"

    def __init__(
        self, path: Path | str, buffer_pool_bytes: int | None = None, read_only: bool = False
    ) -> None:
        try:
            import ladybug
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise GraphUnavailable(
                "the embedded graph engine (ladybug) is not installed",
                "reinstall conceptmem: pip install --force-reinstall conceptmem",
            ) from exc
        self.path = Path(path)
        self.target = str(self.path)
        self.read_only = read_only
        if read_only and not self.path.exists():
            raise GraphUnavailable(f"no graph at {self.path} yet", "run `conceptmem sync` first")
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._in_batch = False
        try:
            self._db = ladybug.Database(
                str(self.path), buffer_pool_size=buffer_pool_bytes or default_buffer_pool(),
                read_only=read_only,
            )
            self._conn = ladybug.Connection(self._db)
        except RuntimeError as exc:
            raise GraphUnavailable(
                f"{self.path}: cannot open the embedded graph: {exc}",
                "it is derived data: run `conceptmem sync --rebuild` to rebuild it "
                "(close other processes writing it first)",
            ) from exc

    # -- plumbing ---------------------------------------------------------------------------
    def _execute(self, query: str, params: Mapping[str, Any] | None = None) -> Any:
        try:
            return self._conn.execute(query, dict(params) if params else None)
        except RuntimeError as exc:
            raise GraphError(
                f"embedded graph query failed: {exc}",
                "check the query; values must be passed as parameters",
            ) from exc

    def _read(self, query: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        result = self._execute(query, params)
        if isinstance(result, list):
            result = result[-1]
        names = result.get_column_names()
        return [dict(zip(names, values, strict=True)) for values in result.get_all()]

    @contextmanager
    def batch(self) -> Iterator[None]:
        """One transaction around a group of writes (one commit instead of one per statement)."""
        if self._in_batch:
            yield
            return
        self._execute("BEGIN TRANSACTION")
        self._in_batch = True
        try:
            yield
        except BaseException:
            self._in_batch = False
            self._conn.execute("ROLLBACK")
            raise
        self._in_batch = False
        self._execute("COMMIT")

    def run_cypher(self, query: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        return self._read(query, params)

    def close(self) -> None:
        self._conn.close()
        self._db.close()

    # -- schema -----------------------------------------------------------------------------
    def ensure_schema(self) -> None:
        for node in SCHEMA.nodes.values():
            self._execute(
                f"CREATE NODE TABLE IF NOT EXISTS {node.label}({_columns(node)}, PRIMARY KEY(id))"
            )
        for edge in SCHEMA.edges.values():
            self._execute(
                f"CREATE REL TABLE IF NOT EXISTS {edge.type}"
                f"(FROM {edge.src_label} TO {edge.dst_label}, {_columns(edge)})"
            )

    def delete_all(self) -> None:
        """Drop and re-declare every table: the fastest way to empty, and picks up new columns."""
        for name in (*SCHEMA.edges, *SCHEMA.nodes):
            self._execute(f"DROP TABLE IF EXISTS {name}")
        self.ensure_schema()

    # -- writes -----------------------------------------------------------------------------
    def upsert_nodes(self, label: str, rows: Sequence[Row]) -> int:
        spec = spec_for(label)
        query = (f"UNWIND $rows AS r MERGE (x:{label} {{id: r.id}}) SET {_set_clause('x', spec)}")
        for start in range(0, len(rows), BATCH):
            self._execute(query, {"rows": list(rows[start : start + BATCH])})
        return len(rows)

    def upsert_edges(self, edge_type: str, rows: Sequence[Row]) -> int:
        spec = spec_for(edge_type)
        assert isinstance(spec, EdgeSpec)
        query = (
            f"UNWIND $rows AS r MATCH (a:{spec.src_label} {{id: r.src}}) "
            f"MATCH (b:{spec.dst_label} {{id: r.dst}}) "
            f"MERGE (a)-[x:{edge_type} {{id: r.id}}]->(b) SET {_set_clause('x', spec)}"
        )
        for start in range(0, len(rows), BATCH):
            self._execute(query, {"rows": list(rows[start : start + BATCH])})
        return len(rows)

    def delete_nodes(self, label: str, ids: Sequence[str]) -> int:
        spec_for(label)
        for start in range(0, len(ids), BATCH):
            chunk = list(ids[start : start + BATCH])
            self._execute(f"MATCH (x:{label}) WHERE x.id IN $ids DETACH DELETE x", {"ids": chunk})
        return len(ids)

    def delete_edges(self, edge_type: str, ids: Sequence[str]) -> int:
        spec = spec_for(edge_type)
        assert isinstance(spec, EdgeSpec)
        query = (f"MATCH (:{spec.src_label})-[x:{edge_type}]->(:{spec.dst_label}) "
                 "WHERE x.id IN $ids DELETE x")
        for start in range(0, len(ids), BATCH):
            self._execute(query, {"ids": list(ids[start : start + BATCH])})
        return len(ids)

    def bulk_load(
        self, nodes: Mapping[str, Sequence[Row]], edges: Mapping[str, Sequence[Row]]
    ) -> None:
        """COPY each table from a temporary CSV (nodes first, then edges; tables may be non-empty).

        Outside ``batch()`` each COPY commits on its own, which skips the write-ahead log:
        much faster, and a failed rebuild is repaired by the next sync. Rows holding an empty
        string (which CSV cannot tell from NULL) are upserted after the copy.
        """
        self._copy_group(nodes, self.upsert_nodes)
        self._copy_group(edges, self.upsert_edges)

    def _copy_group(
        self, tables: Mapping[str, Sequence[Row]], upsert: Callable[[str, Sequence[Row]], int]
    ) -> None:
        later: list[tuple[str, list[Row]]] = []
        with tempfile.TemporaryDirectory(prefix="conceptmem-copy-") as tmp:
            for kind, rows in tables.items():
                spec = spec_for(kind)
                names = list(spec.names)
                if isinstance(spec, EdgeSpec):
                    names = ["src", "dst", *names]
                plain = [row for row in rows if "" not in row.values()]
                if isinstance(spec, EdgeSpec):  # grouped by source node: ~2x faster COPY
                    plain.sort(key=itemgetter("src"))
                later.append((kind, [row for row in rows if "" in row.values()]))
                if not plain:
                    continue
                csv_path = Path(tmp) / f"{kind}.csv"
                _write_csv(csv_path, plain, names)
                data = csv_path.read_bytes()
                # The parallel reader splits on line ends, so only when no value holds one.
                parallel = data.count(b"\n") == data.count(b"\r") == len(plain)
                # COPY takes no parameter for its file: the path is ours (a temp dir), not input.
                literal = str(csv_path).replace("\\", "/").replace("'", "")
                self._execute(
                    f"COPY {kind} FROM '{literal}' (HEADER=false, PARALLEL={str(parallel).lower()})"
                )
        for kind, rows in later:
            if rows:
                upsert(kind, rows)
