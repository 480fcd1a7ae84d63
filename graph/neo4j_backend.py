"""Neo4j over Bolt with the official driver.

Uniqueness constraints (nodes) and indexes (edge ids) are created first; writes go in UNWIND
batches inside managed transactions (``session.execute_write``), so transient errors retry.
Only nodes with this schema's labels are ever deleted.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from graph.cypher_base import CypherGraph, spec_for
from graph.errors import GraphError, GraphUnavailable
from graph.model import SCHEMA, EdgeSpec, NodeSpec, Row

__all__ = ["Neo4jGraph"]

BATCH = 10_000
WRITERS = 2  # sessions for bulk edge loads: ~+25% rels/s on 2 cores (issue #4)
_INSTALL = "pip install 'conceptmem[neo4j]'"


def _props(spec: NodeSpec | EdgeSpec) -> str:
    """``{id: r.id, ...}``: a CREATE map naming the schema's properties (nulls are not stored)."""
    return "{" + ", ".join(f"{name}: r.{name}" for name in spec.names) + "}"


def _assign(spec: NodeSpec | EdgeSpec) -> str:
    """``x.a = r.a, ...`` for every property but the MERGE key: a null removes the property,
    as ``SET x += r`` does, but without the Eager operator that a map SET plans."""
    return ", ".join(f"x.{name} = r.{name}" for name in spec.names if name != "id")


class Neo4jGraph(CypherGraph):
    backend = "neo4j"

    def __init__(
        self, uri: str, user: str, password: str | None, database: str, read_only: bool = False
    ) -> None:
        try:
            import neo4j
            from neo4j import exceptions as neo4j_errors
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise GraphUnavailable("the neo4j driver is not installed", _INSTALL) from exc
        self.database = database
        self.target = f"{uri} (database {database})"
        self.read_only = read_only
        self._routing = neo4j.RoutingControl.READ if read_only else neo4j.RoutingControl.WRITE
        auth = (user, password) if password else None
        try:
            self._driver = neo4j.GraphDatabase.driver(uri, auth=auth)
        except (ValueError, neo4j_errors.ConfigurationError) as exc:
            raise GraphUnavailable(
                f"malformed Neo4j URI {uri!r}: {exc}",
                "set NEO4J_URI like bolt://127.0.0.1:7687 or neo4j://host:7687",
            ) from exc
        try:
            self._driver.verify_connectivity()
        except (neo4j_errors.Neo4jError, neo4j_errors.DriverError, OSError, ValueError) as exc:
            self._driver.close()
            raise GraphUnavailable(
                f"cannot reach Neo4j at {uri}: {exc}",
                "start it (bash .ci/neo4j.sh start) or set NEO4J_URI / NEO4J_USER / "
                "NEO4J_PASSWORD, or use --backend embedded",
            ) from exc
        self._errors = neo4j_errors

    # -- plumbing ---------------------------------------------------------------------------
    def _read(self, query: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        try:
            records, _, _ = self._driver.execute_query(
                query, dict(params or {}), database_=self.database, routing_=self._routing
            )
        except self._errors.Neo4jError as exc:
            raise GraphError(
                f"Neo4j query failed: {exc.message}",
                "check the query; values must be passed as parameters",
            ) from exc
        return [record.data() for record in records]

    def _write(self, query: str, rows: Sequence[Any], key: str = "rows") -> None:
        self._commit([(query, key, list(rows[i : i + BATCH])) for i in range(0, len(rows), BATCH)])

    def _commit(self, jobs: Sequence[tuple[str, str, list[Any]]]) -> None:
        """One managed transaction per (query, parameter name, batch), in order."""
        def work(tx: Any, query: str, params: dict[str, Any]) -> None:
            tx.run(query, params).consume()

        with self._driver.session(database=self.database) as session:
            for query, key, batch in jobs:
                session.execute_write(work, query, {key: batch})

    def _commit_parallel(self, jobs: Sequence[tuple[str, str, list[Any]]]) -> None:
        """Batches dealt round-robin to WRITERS sessions; a lock conflict between them is a
        transient error that ``execute_write`` retries."""
        if len(jobs) < 2:
            self._commit(jobs)
            return
        with ThreadPoolExecutor(WRITERS) as pool:
            list(pool.map(self._commit, [jobs[i::WRITERS] for i in range(WRITERS)]))

    def _auto(self, query: str) -> None:
        with self._driver.session(database=self.database) as session:
            session.run(query).consume()

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Writes already commit per UNWIND batch in managed transactions; nothing to group."""
        yield

    # -- inventory: one collected list per kind decodes ~4x faster than one record per row --
    def ids(self, kind: str) -> set[str]:
        return set(self.hashes(kind))

    def hashes(self, kind: str) -> dict[str, str]:
        spec = spec_for(kind)
        pattern = (f"(x:{spec.label})" if isinstance(spec, NodeSpec)
                   else f"()-[x:{spec.type}]->()")
        rows = self._read(f"MATCH {pattern} RETURN collect([x.id, x.row_hash]) AS pairs")
        return {pair[0]: pair[1] for pair in rows[0]["pairs"]} if rows else {}

    def run_cypher(self, query: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        return self._read(query, params)

    def close(self) -> None:
        self._driver.close()

    # -- schema -----------------------------------------------------------------------------
    def ensure_schema(self) -> None:
        for label in SCHEMA.nodes:
            self._auto(
                f"CREATE CONSTRAINT conceptmem_{label.lower()}_id IF NOT EXISTS "
                f"FOR (x:{label}) REQUIRE x.id IS UNIQUE"
            )
        for edge_type in SCHEMA.edges:
            self._auto(
                f"CREATE INDEX conceptmem_{edge_type.lower()}_id IF NOT EXISTS "
                f"FOR ()-[x:{edge_type}]-() ON (x.id)"
            )
        self._auto("CALL db.awaitIndexes(300)")

    def delete_all(self) -> None:
        labels = " OR ".join(f"x:{label}" for label in SCHEMA.nodes)
        self._auto(
            f"MATCH (x) WHERE {labels} "
            "CALL (x) { DETACH DELETE x } IN TRANSACTIONS OF 10000 ROWS"
        )

    # -- writes -----------------------------------------------------------------------------
    def upsert_nodes(self, label: str, rows: Sequence[Row]) -> int:
        spec = spec_for(label)
        self._write(f"UNWIND $rows AS r MERGE (x:{label} {{id: r.id}}) SET {_assign(spec)}", rows)
        return len(rows)

    def _edge_query(self, edge_type: str, verb: str) -> str:
        """Both ends found by a uniqueness-constrained id (NodeUniqueIndexSeek), no Eager."""
        spec = spec_for(edge_type)
        assert isinstance(spec, EdgeSpec)
        head = (
            f"UNWIND $rows AS r MATCH (a:{spec.src_label} {{id: r.src}}) "
            f"MATCH (b:{spec.dst_label} {{id: r.dst}}) "
        )
        if verb == "CREATE":
            return head + f"CREATE (a)-[x:{edge_type} {_props(spec)}]->(b)"
        return head + f"MERGE (a)-[x:{edge_type} {{id: r.id}}]->(b) SET {_assign(spec)}"

    def upsert_edges(self, edge_type: str, rows: Sequence[Row]) -> int:
        self._write(self._edge_query(edge_type, "MERGE"), rows)
        return len(rows)

    def delete_nodes(self, label: str, ids: Sequence[str]) -> int:
        spec_for(label)
        self._write(f"UNWIND $ids AS i MATCH (x:{label} {{id: i}}) DETACH DELETE x", ids, "ids")
        return len(ids)

    def delete_edges(self, edge_type: str, ids: Sequence[str]) -> int:
        spec_for(edge_type)
        self._write(f"MATCH ()-[x:{edge_type}]->() WHERE x.id IN $ids DELETE x", ids, "ids")
        return len(ids)

    def bulk_load(
        self, nodes: Mapping[str, Sequence[Row]], edges: Mapping[str, Sequence[Row]]
    ) -> None:
        """CREATE instead of MERGE: the rows are known to be absent."""
        for label, rows in nodes.items():
            spec = spec_for(label)
            if rows:
                self._write(f"UNWIND $rows AS r CREATE (x:{label} {_props(spec)})", rows)
        self._commit_parallel([
            (self._edge_query(edge_type, "CREATE"), "rows", list(rows[i : i + BATCH]))
            for edge_type, rows in edges.items()
            for i in range(0, len(rows), BATCH)
        ])
