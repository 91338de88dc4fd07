"""Server errors become Quanta's sentence, code and SQLSTATE: the server's text is not passed on."""

from __future__ import annotations

import pymysql
import pytest

from quanta.monitored.connection import GuardedConnection, _connect_message
from quanta.monitored.options import ConnectionOptions, MonitoredSettings

OPTIONS = ConnectionOptions(host="db.example", port=3306, user="quanta_ro")
SECRET = "hunter2-secret-row"


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (pymysql.err.InternalError(1105, f"XPATH syntax error: '~{SECRET}'"),
         "the server refused the statement (its message is not shown) (error 1105, "
         "InternalError)"),
        (pymysql.err.OperationalError(1142, f"SELECT command denied for table '{SECRET}'"),
         "the account 'quanta_ro' lacks a privilege the statement needs (error 1142, "
         "SQLSTATE 42000)"),
        (pymysql.err.OperationalError(1054, f"Unknown column '{SECRET}' in 'field list'"),
         "a column the statement names does not exist (error 1054, SQLSTATE 42S22)"),
        (pymysql.err.ProgrammingError(1146, f"Table 'shop.{SECRET}' doesn't exist"),
         "a table the statement names does not exist (or the account cannot see it) "
         "(error 1146, SQLSTATE 42S02)"),
        (pymysql.err.ProgrammingError(1064, f"You have an error near '{SECRET}'"),
         "the server could not parse the statement (is the example truncated, or written "
         "for another server version?) (error 1064, SQLSTATE 42000)"),
        (pymysql.err.OperationalError(1969, f"Query execution was interrupted {SECRET}"),
         "stopped by the 2.5 s statement time limit (error 1969, SQLSTATE 70100)"),
        (pymysql.err.OperationalError(1792, f"read only {SECRET}"),
         "refused in a read-only transaction (error 1792, SQLSTATE 25006)"),
        (pymysql.err.InterfaceError(f"weird {SECRET}"),
         "the server refused the statement (InterfaceError)"),
    ],
)  # fmt: skip
def test_statement_errors_are_quantas_sentence(
    error: pymysql.err.MySQLError, expected: str
) -> None:
    conn = GuardedConnection(OPTIONS, MonitoredSettings(statement_timeout=2.5))
    described = conn._describe(error)
    assert described == expected
    assert SECRET not in described


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (pymysql.err.OperationalError(1040, "Too many connections"),
         "the server has too many connections (error 1040)"),
        (pymysql.err.OperationalError(1251, f"Client does not support {SECRET}"),
         "the server refused the connection (error 1251)"),
    ],
)  # fmt: skip
def test_connect_errors_are_quantas_sentence(error: pymysql.err.MySQLError, expected: str) -> None:
    message = _connect_message(OPTIONS, error)
    assert message == f"cannot connect to db.example:3306 as 'quanta_ro': {expected}"
