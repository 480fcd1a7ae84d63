"""Which Cypher clauses a query uses that write: the graph, or files outside it.

The graph is a projection of SQLite, so ``conceptmem cypher`` is read-only by default. The
engine enforces that too (a read-only embedded database, a read transaction on Neo4j); this
check also refuses what an engine would run in read mode yet writes or reads files
(``COPY ... TO '/path'``, ``LOAD FROM``, ``EXPORT DATABASE``) and says which clause it was.
String literals, quoted names and comments are skipped, so a value such as ``'SET'`` or a
property called ```delete``` is not a write.
"""

from __future__ import annotations

import re

__all__ = ["WRITE_CLAUSES", "write_clauses"]

WRITE_CLAUSES = frozenset({
    "CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "DROP", "ALTER", "COPY", "LOAD",
    "INSTALL", "UNINSTALL", "ATTACH", "IMPORT", "EXPORT", "CHECKPOINT", "FOREACH", "BEGIN",
    "COMMIT", "ROLLBACK", "TRUNCATE", "RENAME", "GRANT", "REVOKE", "DENY", "TERMINATE",
})

# Order matters: comments and quoted text first, so the words inside them are never seen.
_TOKENS = re.compile(
    r"""//[^\n]*|/\*.*?(?:\*/|\Z)"""  # comments (an unclosed block comment runs to the end)
    r"""|'(?:[^'\\]|\\.)*(?:'|\Z)|"(?:[^"\\]|\\.)*(?:"|\Z)"""  # string literals
    r"""|`[^`]*(?:`|\Z)"""  # quoted names
    r"""|(?<![\w$.])([A-Za-z_]+)(?![\w])""",  # a bare word not after '.' or '$' (props, params)
    re.DOTALL,
)


def write_clauses(query: str) -> list[str]:
    """The write (or file) clauses in ``query``, upper-cased, in order of first appearance."""
    found: list[str] = []
    for match in _TOKENS.finditer(query):
        word = match.group(1)
        if word is None:
            continue
        upper = word.upper()
        if upper in WRITE_CLAUSES and upper not in found:
            found.append(upper)
    return found
