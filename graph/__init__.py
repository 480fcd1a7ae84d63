"""Graph projection of the stores: one protocol, an embedded engine and Neo4j."""
