"""Workload index plans: per table of an instance, the fewest indexes serving the most load."""
