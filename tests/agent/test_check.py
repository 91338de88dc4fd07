"""`quanta-agent check` against well and badly configured servers of its own.

The fixes the report prints are run as they are, and checking again must find the
problems gone: the statements are exact, not hints.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quanta_agent.cli import app
from tests.fixtures.servers import MariaDBServer, started_mariadb

services = pytest.mark.services
runner = CliRunner()

BAD_SLOW_LOG_AND_NO_PERFORMANCE_SCHEMA = [
    "--slow-query-log=OFF",
    "--long-query-time=10",
    "--log-slow-verbosity=",
    "--performance-schema=OFF",
]
BAD_PERFORMANCE_SCHEMA = [
    "--performance-schema-consumer-statements-digest=OFF",
    "--performance-schema-consumer-events-statements-history=OFF",
    "--performance-schema-consumer-events-statements-history-long=OFF",
    "--performance-schema-digests-size=5",
    "--performance-schema-instrument=statement/sql/select=OFF",
]
_RUNTIME_FIX_RE = re.compile(r"Fix: ((?:SET GLOBAL|UPDATE|GRANT) .*;)$")


# The README's monitoring account on MariaDB: nothing beyond what the agent and Quanta need.
LEAST_GRANT = "GRANT SELECT, PROCESS, SHOW VIEW, BINLOG MONITOR, SLAVE MONITOR ON *.* TO {}"


def dsn(server: MariaDBServer, user: str = "root", password: str = "") -> str:
    auth = f"{user}:{password}" if password else user
    return f"mysql://{auth}@{server.host}:{server.port}/"


def least(server: MariaDBServer) -> str:
    """The DSN of the README's least-privilege account on the server (created if needed)."""
    with contextlib.closing(server.connect()) as conn, conn.cursor() as cursor:
        cursor.execute("CREATE USER IF NOT EXISTS 'least'@'%' IDENTIFIED BY 'pw'")
        cursor.execute(LEAST_GRANT.format("'least'@'%'"))
    return dsn(server, "least", "pw")


def check(*args: str) -> tuple[int, list[str]]:
    result = runner.invoke(app, ["check", *args])
    return result.exit_code, result.output.splitlines()


def apply_fixes(server: MariaDBServer, lines: list[str]) -> int:
    """Run every runtime fix the report printed, as root; return how many."""
    fixes = [m.group(1) for line in lines if (m := _RUNTIME_FIX_RE.search(line))]
    with contextlib.closing(server.connect()) as conn, conn.cursor() as cursor:
        for fix in fixes:
            cursor.execute(fix)
    return len(fixes)


@services
def test_well_configured_server_is_all_well(mariadb_server: MariaDBServer) -> None:
    code, lines = check("--dsn", least(mariadb_server))
    address = f"{mariadb_server.host}:{mariadb_server.port}"
    assert code == 0
    assert len(lines) == 2
    assert lines[0].startswith(f"{address} (10.11")
    assert lines[0].endswith(": all is well.")
    assert lines[1].startswith("  note: stage profiles (where each query's time goes")


@services
def test_an_account_with_more_than_it_needs_is_flagged(mariadb_server: MariaDBServer) -> None:
    code, lines = check("--dsn", dsn(mariadb_server))  # root
    assert code == 1
    assert lines[0].endswith(": 1 problem.")
    problem, fix = lines[1].split(" Fix: ")
    assert problem.startswith("  - 'root'@'")
    assert "has privileges neither the agent nor Quanta needs (ALL PRIVILEGES ON *.*, " in problem
    assert problem.endswith(
        "a statement from a log would run with them, and Quanta's diagnostics refuse such an "
        "account unless an admin allows it."
    )
    assert fix.startswith("use an account with only these: REVOKE ALL PRIVILEGES, GRANT OPTION")
    assert fix.endswith(
        "GRANT SELECT, PROCESS, SHOW VIEW, BINLOG MONITOR, SLAVE MONITOR ON *.* TO "
        f"{problem.split()[1]};"
    )


_STATEMENTS_RE = re.compile(r"(UPDATE performance_schema\.\S+ SET .*?;)")


def statements_after(line: str, word: str) -> list[str]:
    """The UPDATE statements a note gives after ``word`` (up to the next sentence)."""
    part = line.split(f"{word}: ", 1)[1]
    part = re.split(r"(?<=;) (?!UPDATE)", part, maxsplit=1)[0]
    return _STATEMENTS_RE.findall(part)


@services
def test_stage_profiles_are_turned_on_and_off_by_the_statements_given() -> None:
    with started_mariadb() as own:
        _, lines = check("--dsn", least(own.server))
        assert "stage profiles (where each query's time goes, from production) are off" in lines[1]
        assert "Measured cost (sysbench oltp_read_only" in lines[1]
        on = statements_after(lines[1], "On")
        assert len(on) == 2
        waits = statements_after(lines[1], "waits in them too")
        with contextlib.closing(own.server.connect()) as conn, conn.cursor() as cursor:
            for statement in on:
                cursor.execute(statement)
            _, lines = check("--dsn", least(own.server))
            assert "stage profiles are on, waits off" in lines[1]
            for statement in waits:
                cursor.execute(statement)
            code, lines = check("--dsn", least(own.server))
            assert code == 0
            assert "stage profiles and their waits are on" in lines[1]
            for statement in statements_after(lines[1], "Off"):
                cursor.execute(statement)
        _, lines = check("--dsn", least(own.server))
        assert "are off" in lines[1]


@services
def test_tags_need_the_statement_history() -> None:
    off = ["--performance-schema-consumer-events-statements-history-long=OFF"]
    with started_mariadb(off) as own:
        code, lines = check("--dsn", least(own.server))
        assert code == 0
        (note,) = [line for line in lines if "query tags" in line]
        assert note.startswith("  note: query tags from SQL comments (sqlcommenter, key=value)")
        assert note.endswith(
            "On: UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME IN "
            "('events_statements_history_long'); "
            "(my.cnf: performance-schema-consumer-events-statements-history-long=ON)"
        )
        with contextlib.closing(own.server.connect()) as conn, conn.cursor() as cursor:
            (statement,) = _STATEMENTS_RE.findall(note)
            cursor.execute(statement)
        _, lines = check("--dsn", least(own.server))
        assert not [line for line in lines if "query tags" in line]


@services
def test_slow_log_and_performance_schema_off() -> None:
    with started_mariadb(BAD_SLOW_LOG_AND_NO_PERFORMANCE_SCHEMA) as own:
        code, lines = check("--dsn", least(own.server))

        assert code == 1
        assert lines[0].endswith(": 5 problems.")
        fixes = [line.split(" Fix: ", 1)[1] for line in lines[1:6]]
        assert fixes == [
            "SET GLOBAL slow_query_log = ON;",
            "SET GLOBAL long_query_time = 0;",
            "SET GLOBAL log_slow_verbosity = 'query_plan,innodb,explain';",
            "add performance_schema = ON under [mysqld] in my.cnf and restart the server.",
            "SET GLOBAL userstat = ON;",
        ]
        assert "long_query_time is 10 s" in lines[2]
        # What keeps the runtime fixes after a restart: the exact my.cnf lines.
        assert lines[6].startswith("Note: SET GLOBAL and UPDATE")
        assert lines[7:] == [
            "[mysqld]",
            "slow_query_log=ON",
            "long_query_time=0",
            "log_slow_verbosity=query_plan,innodb,explain",
            "userstat=ON",
        ]

        assert apply_fixes(own.server, lines) == 4
        code, lines = check("--dsn", least(own.server))
        assert code == 1  # performance_schema needs a restart with the option
        assert lines[0].endswith(": 1 problem.")
        assert "performance_schema is off" in lines[1]


@services
def test_performance_schema_consumers_instruments_and_digest_table() -> None:
    with started_mariadb(BAD_PERFORMANCE_SCHEMA) as own:
        code, lines = check("--dsn", least(own.server))

        assert code == 1
        assert lines[1:4] == [
            "  - performance_schema consumers are disabled: statements_digest, "
            "events_statements_history_long (statement digests and examples are not "
            "collected). Fix: UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' "
            "WHERE NAME IN ('statements_digest', 'events_statements_history_long');",
            "  - 1 statement instruments are disabled or not timed: those statements are "
            "missing from the digests. Fix: UPDATE performance_schema.setup_instruments SET "
            "ENABLED = 'YES', TIMED = 'YES' WHERE NAME LIKE 'statement/%';",
            "  - The digest table is too small (5 rows, 0 statements lost since start): "
            "statements of new shapes are not counted per digest. Fix: add "
            "performance_schema_digests_size = 10000 under [mysqld] in my.cnf and restart "
            "the server.",
        ]

        options = lines[lines.index("[mysqld]") + 1 :]
        assert options == [
            "performance-schema-consumer-statements-digest=ON",
            "performance-schema-consumer-events-statements-history-long=ON",
            "performance-schema-instrument='statement/sql/select=ON'",
        ]

        assert apply_fixes(own.server, lines) == 2
        code, lines = check("--dsn", least(own.server))
        assert code == 1
        assert next(line.split(" Fix: ")[0] for line in lines[1:]).startswith(
            "  - The digest table is too small (5 rows, "
        )
        assert len([line for line in lines if line.startswith("  - ")]) == 1

    # The my.cnf lines, given at start after the bad settings (as a later line of my.cnf
    # would be; the option file's quotes are the shell's here), fix what they say they fix.
    at_start = [f"--{line.replace(chr(39), '')}" for line in options]
    with started_mariadb([*BAD_PERFORMANCE_SCHEMA, *at_start]) as own:
        code, lines = check("--dsn", least(own.server))
        problems = [line for line in lines if line.startswith("  - ")]
        assert len(problems) == 1, lines
        assert problems[0].startswith("  - The digest table is too small (5 rows, ")


@services
def test_missing_privileges_from_a_config_file(tmp_path: Path) -> None:
    with started_mariadb() as own:
        with contextlib.closing(own.server.connect()) as conn, conn.cursor() as cursor:
            cursor.execute("CREATE USER 'mon'@'%' IDENTIFIED BY 'pw'")
        config = tmp_path / "agent.yaml"
        config.write_text(
            "server: http://127.0.0.1:9\n"
            "token: t\n"
            "instances:\n"
            "  db1:\n"
            f"    dsn: {dsn(own.server, 'mon', 'pw')}\n"
            "    slowlog: {rotate_above_mb: 100}\n"
            "  logs-only:\n"
            "    sources: [slowlog]\n"
            "    slowlog: {path: /var/log/mysql/slow.log}\n"
        )

        code, lines = check("--config", str(config))

        assert code == 1
        assert (
            lines[0]
            == f"db1 ({own.server.host}:{own.server.port}, 10.11" + lines[0].split(", 10.11", 1)[1]
        )
        assert lines[0].endswith(": 3 problems.")
        fixes = [line.split(" Fix: ", 1)[1] for line in lines[1:4]]
        assert fixes == [
            "GRANT PROCESS ON *.* TO 'mon'@'%';",
            "GRANT RELOAD ON *.* TO 'mon'@'%';",
            "GRANT SELECT ON performance_schema.* TO 'mon'@'%';",
        ]
        assert lines[4:6] == [
            "logs-only (no dsn): 1 problem.",
            "  - No dsn is configured, so the server's settings cannot be checked. "
            "Fix: add dsn: mysql://user:password@host:3306/ under instances.logs-only.",
        ]

        assert apply_fixes(own.server, lines) == 3
        code, lines = check("--config", str(config))
        assert lines[0].endswith(": all is well.")
        assert code == 1  # logs-only still has no dsn


def test_unreachable_server_and_bad_arguments() -> None:
    code, lines = check("--dsn", "mysql://mon@127.0.0.1:1/")
    assert code == 1
    assert lines[1].startswith("  - Cannot connect: 127.0.0.1:1: cannot connect to 127.0.0.1:1")
    code, _ = check("--dsn", "postgres://x@y/")
    assert code == 2
    code, _ = check()
    assert code == 2
