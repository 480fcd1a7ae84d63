"""The gardener: topics, merges, splits, decay and bitemporal invalidation."""
