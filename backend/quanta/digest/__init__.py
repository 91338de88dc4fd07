"""`quanta digest`: the pt-query-digest report of slow-log files, read in parallel."""
