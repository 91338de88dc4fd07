"""An account's figures from its USER_STATISTICS columns, in MariaDB's or Percona Server's
layout, as ``user_columns.toml`` maps them (the one place that knows the two layouts)."""

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

MAPPING_FILE = Path(__file__).with_name("user_columns.toml")
ALL_LAYOUTS = "all"


@dataclass(frozen=True, slots=True)
class UserColumns:
    """The mapping: which column tells each layout, and each figure's columns per layout."""

    layouts: dict[str, str]
    figures: dict[str, dict[str, tuple[str, ...]]]

    def layout_of(self, columns: Mapping[str, object]) -> str | None:
        """The layout whose telling column the row has (None: neither, e.g. only
        performance_schema's errors)."""
        return next(
            (name for name, col in self.layouts.items() if columns.get(col) is not None), None
        )

    def figures_of(self, columns: Mapping[str, float | None]) -> dict[str, float | None]:
        """Every figure of one account from its (summed) columns; None where the row's
        layout does not count it.

        Example:
            >>> mapping = user_columns()
            >>> f = mapping.figures_of({"rows_sent": 3, "rows_inserted": 1, "rows_deleted": 2})
            >>> (f["rows_sent"], f["rows_changed"], f["rows_updated"], f["cpu_time_s"])
            (3, 3, None, None)
        """
        layout = self.layout_of(columns)
        out: dict[str, float | None] = {}
        for figure, by_layout in self.figures.items():
            names = by_layout.get(ALL_LAYOUTS) or (by_layout.get(layout, ()) if layout else ())
            values = [v for v in (columns.get(name) for name in names) if v is not None]
            out[figure] = sum(values) if values else None
        return out


@cache
def user_columns() -> UserColumns:
    """The mapping file, read once."""
    with MAPPING_FILE.open("rb") as handle:
        data = tomllib.load(handle)
    return UserColumns(
        layouts=dict(data["layouts"]),
        figures={
            figure: {layout: tuple(columns) for layout, columns in by_layout.items()}
            for figure, by_layout in data["figures"].items()
        },
    )
