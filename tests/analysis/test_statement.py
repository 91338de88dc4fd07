"""describe_statement: the statement type and tables of a query class, from a fingerprint too."""

from __future__ import annotations

import pytest

from quanta.analysis.fingerprint import fingerprint
from quanta.analysis.statement import StatementInfo, describe_statement


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        # Fingerprint forms are written back as SQL before parsing (issue 24, item 5).
        ("SELECT * FROM orders WHERE id IN (1, 2)", StatementInfo("select", ("orders",))),
        ("INSERT INTO t (a, b) VALUES (1, 2), (3, 4)", StatementInfo("insert", ("t",))),
        ("INSERT INTO t (a) VALUE (1)", StatementInfo("insert", ("t",))),
        ("SELECT 1, 2 FROM t JOIN u ON u.id = t.id", StatementInfo("select", ("t", "u"))),
        ("SELECT * FROM t WHERE a = @x", StatementInfo("select", ("t",))),
        # Quoted names keep their backticks in the fingerprint, so they parse as one name.
        (
            "SELECT * FROM `shop-prod`.`orders` WHERE `order` = 1",
            StatementInfo("select", ("shop-prod.orders",)),
        ),
        ("SELECT `a b` FROM `db.t1`", StatementInfo("select", ("db.t1",))),
        ("administrator command: Quit", StatementInfo("admin", ())),
    ],
)
def test_tables_are_read_from_the_fingerprint_alone(sql: str, expected: StatementInfo) -> None:
    assert describe_statement(fingerprint(sql)) == expected


def test_an_example_is_read_before_the_fingerprint() -> None:
    info = describe_statement("select * from t where a in(?+)", "SELECT * FROM db.t WHERE a = 1")
    assert info == StatementInfo("select", ("db.t",))
