"""`quanta-agent check`: what a monitored server lacks for the agent, and how to fix it.

Every finding says in plain words what is wrong and gives the exact statement (or my.cnf
line) that fixes it. Only what the instance's sources need is checked: the slow-log settings
for ``slowlog``, performance_schema for ``perfschema``, a statistics source for ``stats``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from quanta.analysis.grants import excess_privileges
from quanta.analysis.sources import SOURCES
from quanta_agent.config import InstanceSettings, Source, load_settings
from quanta_agent.mysql import Flavor, MonitorConnection, MonitorError
from quanta_agent.perfschema import TAG_CONSUMERS
from quanta_agent.stages import (
    COST_NOTE,
    DISABLE_STAGES,
    DISABLE_WAITS,
    ENABLE_STAGES,
    ENABLE_WAITS,
    StageSampler,
)

SLOWLOG, PERFSCHEMA, STATS = Source.SLOWLOG, Source.PERFSCHEMA, Source.STATS

# Queries faster than long_query_time never reach the slow log; above this most of the
# load is invisible to the slow-log source.
MAX_LONG_QUERY_TIME = 0.1
RECOMMENDED_LONG_QUERY_TIME = 0
# Below this many rows the digest table fills up on any real application.
MIN_DIGESTS_SIZE = 1000
RECOMMENDED_DIGESTS_SIZE = 10000
MARIADB_SLOW_VERBOSITY = ("query_plan", "innodb", "explain")
PERCONA_SLOW_VERBOSITY = "full"
DIGEST_CONSUMERS = (
    "global_instrumentation",
    "thread_instrumentation",
    "statements_digest",
    "events_statements_current",
)
EXAMPLE_CONSUMERS = ("events_statements_history_long", "events_statements_history")
# Up to this many disabled instruments are named one by one in the my.cnf lines.
MAX_NAMED_INSTRUMENTS = 10
ACCESS_DENIED_CODES = ("error 1142", "error 1227", "error 1044")
PERSISTENCE_NOTE = (
    "SET GLOBAL and UPDATE performance_schema.setup_* last until the server restarts: to "
    "keep them, put these lines under [mysqld] in my.cnf too:"
)


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing missing on a server: what, the statement that fixes it, and for a runtime
    fix the exact my.cnf lines (under [mysqld]) that keep it after a restart."""

    problem: str
    fix: str
    my_cnf: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.problem} Fix: {self.fix}"


@dataclass(frozen=True, slots=True)
class CheckTarget:
    """What to check on one server and for which sources."""

    name: str
    conn: MonitorConnection
    sources: Collection[str] = SOURCES
    examples: bool = True
    rotates_slow_log: bool = False


Check = Callable[[MonitorConnection, CheckTarget], list[Finding]]


@dataclass
class CheckReport:
    """The findings for one server; ``ok`` when there are none."""

    name: str
    address: str
    server: str = ""
    findings: list[Finding] = field(default_factory=list)
    # What is worth knowing but missing nothing (stage profiles are optional, with a cost).
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing is missing."""
        return not self.findings

    def lines(self) -> list[str]:
        """The report in plain words, one line per finding."""
        details = [d for d in (self.address, self.server) if d and d != self.name]
        where = f"{self.name} ({', '.join(details)})" if details else self.name
        notes = [f"  note: {note}" for note in self.notes]
        if self.ok:
            return [f"{where}: all is well.", *notes]
        count = len(self.findings)
        head = f"{where}: {count} problem{'s' if count > 1 else ''}."
        return [head, *(f"  - {finding}" for finding in self.findings), *notes]


def check_server(target: CheckTarget) -> CheckReport:
    """Connect to one server and list what it lacks for the target's sources."""
    conn = target.conn
    report = CheckReport(name=target.name, address=conn.params.address)
    try:
        report.server = conn.version
    except MonitorError as exc:
        report.findings.append(
            Finding(
                f"Cannot connect: {exc}.",
                "check the DSN, that the server is up and that the account exists, e.g. "
                "CREATE USER 'quanta'@'%' IDENTIFIED BY '...';",
            )
        )
        return report
    for check in _checks_for(target):
        if check in _NEED_PERFORMANCE_SCHEMA and _performance_schema_denied(report.findings):
            continue  # already reported: the GRANT comes first
        try:
            report.findings.extend(check(conn, target))
        except MonitorError as exc:
            report.findings.append(_unreadable(conn, exc))
    if PERFSCHEMA in target.sources and not report.findings:
        report.notes.extend(_stage_profiles(conn, target.name))
        report.notes.extend(_tags_from_history(conn))
    return report


def _tags_from_history(conn: MonitorConnection) -> list[str]:
    """Whether performance_schema keeps the statement texts that query tags come from."""
    try:
        enabled = {
            str(r["NAME"])
            for r in conn.query("SELECT NAME, ENABLED FROM performance_schema.setup_consumers")
            if str(r["ENABLED"]).upper() == "YES"
        }
    except MonitorError:
        return []
    missing = [c for c in TAG_CONSUMERS if c not in enabled]
    if not missing:
        return []
    names = ", ".join(f"'{c}'" for c in missing)
    lines = " ".join(f"{consumer_option(c)}=ON" for c in missing)
    return [
        "query tags from SQL comments (sqlcommenter, key=value) need "
        "events_statements_history_long where the slow log is not read: performance_schema's "
        "digests drop comments. On: UPDATE performance_schema.setup_consumers SET ENABLED = "
        f"'YES' WHERE NAME IN ({names}); (my.cnf: {lines})"
    ]


def _stage_profiles(conn: MonitorConnection, name: str) -> list[str]:
    """Whether the server keeps what production stage profiles need, the statements that
    turn them on or off, and what they cost."""
    try:
        kept = StageSampler(conn, name).collection()
    except MonitorError:
        return []
    waits_on = f"waits in them too: {' '.join(ENABLE_WAITS)}"
    if not kept.stages:
        return [
            "stage profiles (where each query's time goes, from production) are off. "
            f"On: {' '.join(ENABLE_STAGES)} {COST_NOTE} Then {waits_on}",
        ]
    off = f"Off: {' '.join(DISABLE_WAITS)} {' '.join(DISABLE_STAGES)}"
    if not kept.waits:
        return [f"stage profiles are on, waits off. {COST_NOTE} {off} For {waits_on}"]
    return [f"stage profiles and their waits are on. {COST_NOTE} {off}"]


def _performance_schema_denied(findings: list[Finding]) -> bool:
    return any(f.fix.startswith("GRANT SELECT ON performance_schema") for f in findings)


def _checks_for(target: CheckTarget) -> list[Check]:
    checks: list[Check] = [_privileges]
    if SLOWLOG in target.sources:
        checks.append(_slow_log)
    if PERFSCHEMA in target.sources:
        checks.append(_performance_schema)
    if STATS in target.sources:
        checks.append(_statistics)
    return checks


def _unreadable(conn: MonitorConnection, exc: MonitorError) -> Finding:
    if any(code in str(exc) for code in ACCESS_DENIED_CODES):
        return Finding(
            f"The account may not read what the agent needs: {exc}.",
            f"GRANT SELECT ON performance_schema.* TO {_account(conn)};",
        )
    return Finding(f"Could not read the server's settings: {exc}.", "see the error above.")


# --------------------------------------------------------------------------- privileges


def _account(conn: MonitorConnection) -> str:
    user, _, host = str(conn.query("SELECT CURRENT_USER() AS u")[0]["u"]).rpartition("@")
    return f"'{user}'@'{host}'"


def _privileges(conn: MonitorConnection, target: CheckTarget) -> list[Finding]:
    account = _account(conn)
    granted = {
        str(r["PRIVILEGE_TYPE"]).upper()
        for r in conn.query(
            "SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = %s",
            [account],
        )
    }
    findings = []
    if "PROCESS" not in granted:
        findings.append(
            Finding(
                f"{account} lacks the PROCESS privilege: the statistics of other accounts "
                "and the statements of other sessions stay hidden.",
                f"GRANT PROCESS ON *.* TO {account};",
            )
        )
    if target.rotates_slow_log and "RELOAD" not in granted:
        findings.append(
            Finding(
                f"{account} lacks the RELOAD privilege, which rotating the slow log "
                "(FLUSH SLOW LOGS) needs.",
                f"GRANT RELOAD ON *.* TO {account};",
            )
        )
    if {PERFSCHEMA, STATS} & set(target.sources) and not _can_read_performance_schema(conn):
        findings.append(
            Finding(
                f"{account} may not read performance_schema.",
                f"GRANT SELECT ON performance_schema.* TO {account};",
            )
        )
    return findings + _broad_privileges(conn, target, account)


def _broad_privileges(conn: MonitorConnection, target: CheckTarget, account: str) -> list[Finding]:
    """Privileges beyond SELECT, PROCESS, SHOW VIEW, REPLICATION CLIENT (and RELOAD where the
    agent rotates the slow log), from SHOW GRANTS: the same rule the server's diagnostics
    enforce (quanta.analysis.grants)."""
    lines = [str(next(iter(row.values()))) for row in conn.query("SHOW GRANTS FOR CURRENT_USER()")]
    needed = {"RELOAD ON *.*"} if target.rotates_slow_log else set()
    excess = [p for p in excess_privileges(lines) if p not in needed]
    if not excess:
        return []
    monitor = (
        "BINLOG MONITOR, SLAVE MONITOR" if conn.flavor is Flavor.MARIADB else "REPLICATION CLIENT"
    )
    reload = ", RELOAD" if target.rotates_slow_log else ""
    return [
        Finding(
            f"{account} has privileges neither the agent nor Quanta needs ({', '.join(excess)}): "
            "a statement from a log would run with them, and Quanta's diagnostics refuse "
            "such an account unless an admin allows it.",
            f"use an account with only these: REVOKE ALL PRIVILEGES, GRANT OPTION FROM "
            f"{account}; GRANT SELECT, PROCESS, SHOW VIEW, {monitor}{reload} ON *.* TO {account};",
        )
    ]


def _can_read_performance_schema(conn: MonitorConnection) -> bool:
    try:
        conn.query("SELECT 1 FROM performance_schema.setup_consumers LIMIT 1")
    except MonitorError as exc:
        if any(code in str(exc) for code in ACCESS_DENIED_CODES):
            return False
        raise
    return True


# --------------------------------------------------------------------------- slow log


def _slow_log(conn: MonitorConnection, target: CheckTarget) -> list[Finding]:
    found = conn.variables(
        "slow_query_log", "log_output", "long_query_time", "log_slow_verbosity", "log_slow_extra"
    )
    findings = []
    if found.get("slow_query_log", "OFF").upper() not in ("ON", "1"):
        findings.append(
            Finding(
                "The slow query log is off.",
                "SET GLOBAL slow_query_log = ON;",
                ("slow_query_log=ON",),
            )
        )
    if "FILE" not in found.get("log_output", "FILE").upper():
        findings.append(
            Finding(
                f"The slow log goes to {found['log_output']}, not to a file the agent can tail.",
                "SET GLOBAL log_output = 'FILE';",
                ("log_output=FILE",),
            )
        )
    long_query_time = float(found.get("long_query_time", 0))
    if long_query_time > MAX_LONG_QUERY_TIME:
        findings.append(
            Finding(
                f"long_query_time is {long_query_time:g} s: faster queries never reach the "
                "slow log, and they are usually most of the load.",
                f"SET GLOBAL long_query_time = {RECOMMENDED_LONG_QUERY_TIME};",
                (f"long_query_time={RECOMMENDED_LONG_QUERY_TIME}",),
            )
        )
    findings.extend(_slow_log_detail(conn.flavor, found))
    return findings


def _slow_log_detail(flavor: Flavor, found: dict[str, str]) -> list[Finding]:
    verbosity = {v.strip().lower() for v in found.get("log_slow_verbosity", "").split(",")}
    if flavor == Flavor.MARIADB and not {"query_plan", "all", "full"} & verbosity:
        wanted = ",".join(MARIADB_SLOW_VERBOSITY)
        return [
            Finding(
                "log_slow_verbosity lacks query_plan: the slow log has no temporary-table, "
                "filesort or full-scan flags.",
                f"SET GLOBAL log_slow_verbosity = '{wanted}';",
                (f"log_slow_verbosity={wanted}",),
            )
        ]
    if flavor == Flavor.PERCONA and PERCONA_SLOW_VERBOSITY not in verbosity:
        return [
            Finding(
                "log_slow_verbosity is not 'full': the slow log has no InnoDB and query-plan "
                "details.",
                f"SET GLOBAL log_slow_verbosity = '{PERCONA_SLOW_VERBOSITY}';",
                (f"log_slow_verbosity={PERCONA_SLOW_VERBOSITY}",),
            )
        ]
    if flavor == Flavor.MYSQL and found.get("log_slow_extra", "").upper() == "OFF":
        return [
            Finding(
                "log_slow_extra is off: the slow log has no bytes, temporary-table or sort "
                "counters.",
                "SET GLOBAL log_slow_extra = ON;",
                ("log_slow_extra=ON",),
            )
        ]
    return []


# --------------------------------------------------------------------------- performance_schema


def _performance_schema(conn: MonitorConnection, target: CheckTarget) -> list[Finding]:
    found = conn.variables("performance_schema", "performance_schema_digests_size")
    if found.get("performance_schema", "OFF").upper() not in ("ON", "1"):
        return [
            Finding(
                "performance_schema is off; it can only be turned on at server start.",
                "add performance_schema = ON under [mysqld] in my.cnf and restart the server.",
            )
        ]
    findings = _consumers(conn, target)
    findings.extend(_statement_instruments(conn))
    size = int(found.get("performance_schema_digests_size", RECOMMENDED_DIGESTS_SIZE))
    status = conn.status("Performance_schema_digest_lost")
    lost = int(status.get("performance_schema_digest_lost", 0))
    if size < MIN_DIGESTS_SIZE or lost:
        findings.append(
            Finding(
                f"The digest table is too small ({size} rows, {lost} statements lost since "
                "start): statements of new shapes are not counted per digest.",
                f"add performance_schema_digests_size = {RECOMMENDED_DIGESTS_SIZE} under "
                "[mysqld] in my.cnf and restart the server.",
            )
        )
    return findings


def _consumers(conn: MonitorConnection, target: CheckTarget) -> list[Finding]:
    enabled = {
        str(r["NAME"]): str(r["ENABLED"]).upper() == "YES"
        for r in conn.query("SELECT NAME, ENABLED FROM performance_schema.setup_consumers")
    }
    missing = [name for name in DIGEST_CONSUMERS if not enabled.get(name, False)]
    if target.examples and not any(enabled.get(name, False) for name in EXAMPLE_CONSUMERS):
        missing.append(EXAMPLE_CONSUMERS[0])
    if not missing:
        return []
    names = ", ".join(f"'{name}'" for name in missing)
    return [
        Finding(
            f"performance_schema consumers are disabled: {', '.join(missing)} (statement "
            "digests and examples are not collected).",
            "UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' "
            f"WHERE NAME IN ({names});",
            tuple(f"{consumer_option(name)}=ON" for name in missing),
        )
    ]


def _statement_instruments(conn: MonitorConnection) -> list[Finding]:
    off = [
        str(row["NAME"])
        for row in conn.query(
            "SELECT NAME FROM performance_schema.setup_instruments "
            "WHERE NAME LIKE 'statement/%' AND (ENABLED = 'NO' OR TIMED = 'NO') ORDER BY NAME"
        )
    ]
    if not off:
        return []
    # At start an exact name wins over a pattern: name the few that are off, so that the
    # line beats whatever turned them off; many are switched on by the pattern.
    names = off if len(off) <= MAX_NAMED_INSTRUMENTS else ["statement/%"]
    return [
        Finding(
            f"{len(off)} statement instruments are disabled or not timed: those statements "
            "are missing from the digests.",
            "UPDATE performance_schema.setup_instruments SET ENABLED = 'YES', TIMED = 'YES' "
            "WHERE NAME LIKE 'statement/%';",
            tuple(f"performance-schema-instrument='{name}=ON'" for name in names),
        )
    ]


# --------------------------------------------------------------------------- statistics


def _statistics(conn: MonitorConnection, target: CheckTarget) -> list[Finding]:
    found = conn.variables("userstat", "performance_schema")
    if found.get("userstat", "").upper() in ("ON", "1"):
        return []
    if found.get("performance_schema", "").upper() in ("ON", "1"):
        return _table_io_instrument(conn)
    problem = "No table and index statistics: userstat and performance_schema are off."
    if "userstat" in found:
        return [Finding(problem, "SET GLOBAL userstat = ON;", ("userstat=ON",))]
    fix = "add performance_schema = ON under [mysqld] in my.cnf and restart the server."
    return [Finding(problem, fix)]


def _table_io_instrument(conn: MonitorConnection) -> list[Finding]:
    rows = conn.query(
        "SELECT ENABLED, TIMED FROM performance_schema.setup_instruments "
        "WHERE NAME = 'wait/io/table/sql/handler'"
    )
    if rows and str(rows[0]["ENABLED"]).upper() == "YES":
        return []
    return [
        Finding(
            "The table I/O instrument is disabled: no per-table and per-index statistics.",
            "UPDATE performance_schema.setup_instruments SET ENABLED = 'YES', TIMED = 'YES' "
            "WHERE NAME = 'wait/io/table/sql/handler';",
            ("performance-schema-instrument='wait/io/table/sql/handler=ON'",),
        )
    ]


_NEED_PERFORMANCE_SCHEMA: tuple[Check, ...] = (_performance_schema, _statistics)


def consumer_option(consumer: str) -> str:
    """The server option that enables a performance_schema consumer at start.

    >>> consumer_option("events_statements_current")
    'performance-schema-consumer-events-statements-current'
    """
    return "performance-schema-consumer-" + consumer.replace("_", "-")


def persistent_options(reports: Collection[CheckReport]) -> list[str]:
    """The my.cnf lines (under [mysqld]) that keep the runtime fixes of these reports after
    a restart, each once, in the order the findings give them."""
    lines = (line for report in reports for f in report.findings for line in f.my_cnf)
    return list(dict.fromkeys(lines))


def check_targets(config: Path | None, dsns: Sequence[str]) -> list[CheckReport]:
    """Check every instance of a config file and every DSN given (all sources for those).

    Raises:
        ConfigError: The config file is unreadable or invalid.
        ValueError: A DSN is malformed.
    """
    targets: list[CheckTarget | CheckReport] = []
    if config is not None:
        settings = load_settings(config)
        targets.extend(_target_for(instance) for instance in settings.instances.values())
    for dsn in dsns:
        conn = MonitorConnection.from_dsn(dsn)
        targets.append(CheckTarget(name=conn.params.address, conn=conn))
    reports = []
    for target in targets:
        if isinstance(target, CheckReport):
            reports.append(target)
            continue
        try:
            reports.append(check_server(target))
        finally:
            target.conn.close()
    return reports


def _target_for(instance: InstanceSettings) -> CheckTarget | CheckReport:
    sources = [s.value for s in instance.sources]
    if not instance.dsn:
        return CheckReport(
            name=instance.name,
            address="no dsn",
            findings=[
                Finding(
                    "No dsn is configured, so the server's settings cannot be checked.",
                    f"add dsn: mysql://user:password@host:3306/ under instances.{instance.name}.",
                )
            ],
        )
    return CheckTarget(
        name=instance.name,
        conn=MonitorConnection.from_dsn(instance.dsn, name=instance.name),
        sources=sources,
        examples=instance.examples.value != "off",
        rotates_slow_log=SLOWLOG in sources and instance.slowlog.rotate_above_mb > 0,
    )
