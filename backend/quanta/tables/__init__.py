"""Schema snapshots of the tables monitored queries touch, in the index advisor's format."""
