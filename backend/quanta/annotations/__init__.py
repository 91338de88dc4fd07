"""Annotations: deploys and schema changes marked on the timeline, and their measured impact."""
