"""Which table a statement changes the structure of: ALTER TABLE, CREATE INDEX, DROP INDEX.

Pure and forgiving: the input is a fingerprint or an example as the slow log holds it, and a
statement that is not one of these (or cannot be read) changes no table. The caller qualifies
an unqualified name with the statement's database (quanta.tables.service.qualify_tables).
"""

import re

from quanta.analysis.sqltext import unquote_ident

_NAME = r"(?:`(?:[^`]|``)+`|[A-Za-z0-9_$]+)"
# The changed table: an optional database, then the table, as named groups.
_TABLE = rf"(?:(?P<db>{_NAME})\s*\.\s*)?(?P<table>{_NAME})"
_LEAD = r"^\s*(?:/\*.*?\*/\s*)*"  # comments a client puts before the statement
_PATTERNS = tuple(
    re.compile(_LEAD + pattern, re.IGNORECASE | re.DOTALL)
    for pattern in (
        rf"alter\s+(?:online\s+|ignore\s+)*table\s+(?:if\s+exists\s+)?{_TABLE}",
        r"create\s+(?:or\s+replace\s+)?(?:online\s+|offline\s+)?"
        r"(?:unique\s+|fulltext\s+|spatial\s+)?index\s+(?:if\s+not\s+exists\s+)?"
        rf"{_NAME}\s+(?:using\s+\w+\s+)?on\s+{_TABLE}",
        rf"drop\s+(?:online\s+|offline\s+)?index\s+(?:if\s+exists\s+)?{_NAME}\s+on\s+{_TABLE}",
    )
)


def changed_table(sql: str) -> str | None:
    """The table (``db.table`` or ``table``, names unquoted) whose structure ``sql`` changes
    when it is an ALTER TABLE, CREATE INDEX or DROP INDEX; None otherwise.

    >>> changed_table("ALTER TABLE `shop`.`orders` ADD INDEX idx_phone (phone)")
    'shop.orders'
    >>> changed_table("create index idx_phone on orders (phone)")
    'orders'
    >>> changed_table("select * from orders") is None
    True
    """
    for pattern in _PATTERNS:
        match = pattern.match(sql)
        if match is not None:
            names = [match["db"], match["table"]]
            return ".".join(unquote_ident(name) for name in names if name)
    return None
