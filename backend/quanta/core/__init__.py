"""Shared infrastructure: configuration, database, security, task client."""
