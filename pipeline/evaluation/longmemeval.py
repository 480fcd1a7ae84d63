"""LongMemEval (placeholder replaced below)."""
