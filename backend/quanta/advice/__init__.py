"""Index suggestions for monitored queries: advised, validated on a sandbox, tracked."""
