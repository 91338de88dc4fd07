"""EXPLAIN and profiles of real query examples on monitored servers."""
