"""Pure domain logic: slow-log parsing, fingerprints, aggregation. No I/O, web, DB or Celery."""
