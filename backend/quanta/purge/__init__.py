"""Purge: delete every stored trace of one query class."""
