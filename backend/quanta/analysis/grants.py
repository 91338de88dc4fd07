"""What an account may do, from its ``SHOW GRANTS`` lines, and what it should not.

Quanta's monitoring account needs only SELECT, PROCESS, SHOW VIEW and REPLICATION CLIENT
(MariaDB 10.5+ prints the last as BINLOG MONITOR and, since 10.5.9, SLAVE MONITOR, alias
REPLICA MONITOR). Anything else (a write or DDL privilege, SUPER, FILE, EXECUTE, CREATE
ROUTINE, an admin or dynamic privilege, ALL PRIVILEGES, GRANT OPTION, PROXY, a role whose
privileges SHOW GRANTS does not expand) is *excess*: diagnostics refuse to run with such an
account unless an admin overrides it.

Understood forms (one line of ``SHOW GRANTS FOR CURRENT_USER()`` each):

* MySQL 5.7/8.0: ``GRANT SELECT, PROCESS ON *.* TO 'u'@'%'``, column lists
  (``SELECT (a, b)``), ``ON PROCEDURE db.p``, 8.0's dynamic privileges written without
  spaces (``GRANT BACKUP_ADMIN,SYSTEM_VARIABLES_ADMIN ON *.* TO ...``), role grants
  (``GRANT `r`@`%` TO `u`@`%```), partial revokes (``REVOKE ... FROM``, ignored: they
  narrow a grant that is still excess elsewhere).
* MariaDB 10.x/11.x: backticked accounts, ``IDENTIFIED BY PASSWORD '*...'`` /
  ``IDENTIFIED VIA ...`` and resource limits after the account, ``GRANT PROXY ON ''@'%'``,
  role grants (``GRANT `r` TO `u`@`%```), privilege names with spaces (``BINLOG MONITOR``,
  ``READ_ONLY ADMIN``, ``SHOW CREATE ROUTINE``).

Example:
    >>> excess_privileges(["GRANT SELECT, PROCESS ON *.* TO `quanta`@`%`"])
    []
    >>> excess_privileges(["GRANT SELECT, INSERT ON `shop`.* TO 'app'@'%' WITH GRANT OPTION"])
    ['GRANT OPTION ON `shop`.*', 'INSERT ON `shop`.*']
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from quanta.analysis.sqltext import unquote_ident

__all__ = ["ALLOWED_PRIVILEGES", "Grant", "excess_privileges", "granted", "parse_grant"]

# What Quanta needs, and the names servers print for them.
ALLOWED_PRIVILEGES = frozenset(
    (
        "SELECT",
        "PROCESS",
        "SHOW VIEW",
        "REPLICATION CLIENT",
        "BINLOG MONITOR",  # MariaDB 10.5+: REPLICATION CLIENT's new name
        "SLAVE MONITOR",  # MariaDB 10.5.9+: the replica half of REPLICATION CLIENT
        "REPLICA MONITOR",  # its alias
        "USAGE",  # no privilege at all
    )
)
_ALL = "ALL PRIVILEGES"

_GRANT_RE = re.compile(
    r"""\A\s*GRANT\s+(?P<privileges>.+?)\s+ON\s+
        (?:(?P<object>TABLE|FUNCTION|PROCEDURE|PACKAGE\s+BODY|PACKAGE)\s+)?
        (?P<level>(?:`(?:[^`]|``)*`|'(?:[^']|'')*'|[^\s`']+)(?:@(?:`(?:[^`]|``)*`|'(?:[^']|'')*'|[^\s`']+))?
                  (?:\.(?:`(?:[^`]|``)*`|\*|[^\s`'.]+))?)
        \s+TO\s+(?P<rest>.+)\Z""",
    re.IGNORECASE | re.VERBOSE | re.DOTALL,
)
_ROLE_RE = re.compile(
    r"\A\s*GRANT\s+(?P<roles>(?:`[^`]*`|'[^']*'|[\w$]+)(?:@(?:`[^`]*`|'[^']*'|[\w.%$-]+))?"
    r"(?:\s*,\s*(?:`[^`]*`|'[^']*'|[\w$]+)(?:@(?:`[^`]*`|'[^']*'|[\w.%$-]+))?)*)\s+TO\s+",
    re.IGNORECASE,
)
_WITH_GRANT_OPTION_RE = re.compile(r"\bWITH\b(?:\s+\w+\s+\d+)*\s+GRANT\s+OPTION\b", re.IGNORECASE)
_ADMIN_OPTION_RE = re.compile(r"\bWITH\s+ADMIN\s+OPTION\b", re.IGNORECASE)
# Lines that grant nothing: partial revokes (MySQL 8) and MariaDB's default role (the role's
# own GRANT line is there too).
_GRANTS_NOTHING_RE = re.compile(r"\s*(?:REVOKE\b|SET\s+DEFAULT\s+ROLE\b)", re.IGNORECASE)
_COLUMNS_RE = re.compile(r"\([^)]*\)")
_SPACES_RE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Grant:
    """One ``GRANT`` line: its privileges (upper case, column lists dropped) and where.

    Attributes:
        privileges: e.g. ``("SELECT", "SHOW VIEW")``; ``("ALL PRIVILEGES",)``.
        level: ``*.*``, ```shop`.*``, ``PROCEDURE `shop`.`p```, ``''@'%'`` (PROXY).
        grant_option: ``WITH GRANT OPTION`` (or ``WITH ADMIN OPTION`` for a role).
        roles: the roles granted, for a role grant (then ``privileges`` is empty).
    """

    privileges: tuple[str, ...]
    level: str
    grant_option: bool = False
    roles: tuple[str, ...] = ()


def parse_grant(line: str) -> Grant | None:
    """One ``SHOW GRANTS`` line as a Grant; None for what grants nothing (a REVOKE).

    Raises:
        ValueError: a line that is neither a GRANT nor a REVOKE this parser understands
            (the caller treats the account as unverified rather than clean).

    Example:
        >>> parse_grant("GRANT SELECT (id, name), INSERT (id) ON `shop`.`t` TO 'u'@'%'")
        Grant(privileges=('SELECT', 'INSERT'), level='`shop`.`t`', grant_option=False, roles=())
    """
    text = line.strip().rstrip(";")
    if _GRANTS_NOTHING_RE.match(text):
        return None
    match = _GRANT_RE.match(text)
    if match:
        names = _privilege_names(match["privileges"])
        level = match["level"]
        if match["object"]:
            level = f"{_SPACES_RE.sub(' ', match['object'].upper())} {level}"
        option = bool(_WITH_GRANT_OPTION_RE.search(match["rest"]))
        return Grant(privileges=names, level=level, grant_option=option)
    role = _ROLE_RE.match(text)
    if role:
        roles = tuple(r.strip() for r in _split_top_level(role["roles"]))
        return Grant(
            privileges=(), level="", grant_option=bool(_ADMIN_OPTION_RE.search(text)), roles=roles
        )
    raise ValueError(f"not a GRANT line this parser understands: {text[:80]!r}")


def granted(lines: Iterable[str]) -> list[str]:
    """Every privilege the lines grant, as ``PRIVILEGE ON level`` (roles as ``role r``),
    in the order given: what the instance page lists. A line that cannot be parsed is
    left out here (:func:`excess_privileges` reports it)."""
    shown: list[str] = []
    for grant in filter(None, map(_parsed_or_none, lines)):
        shown += [f"role {role}" for role in grant.roles]
        shown += [f"{name} ON {grant.level}" for name in grant.privileges if name != "USAGE"]
        if grant.grant_option:
            shown.append(f"GRANT OPTION ON {grant.level or ', '.join(grant.roles)}")
    return list(dict.fromkeys(shown))


def excess_privileges(lines: Iterable[str]) -> list[str]:
    """The privileges beyond SELECT, PROCESS, SHOW VIEW and REPLICATION CLIENT, sorted.

    A role grant is excess (its privileges are not listed, so they cannot be vouched for);
    so is a line that cannot be parsed, quoted back so the admin sees which.
    """
    excess: set[str] = set()
    for line in lines:
        try:
            grant = parse_grant(line)
        except ValueError:
            excess.add(f"unrecognised grant: {line.strip()[:80]}")
            continue
        if grant is None:
            continue
        excess.update(f"role {role}" for role in grant.roles)
        beyond = [name for name in grant.privileges if name not in ALLOWED_PRIVILEGES]
        excess.update(f"{name} ON {grant.level}" for name in beyond)
        if grant.grant_option:
            excess.add(f"GRANT OPTION ON {grant.level or ', '.join(grant.roles)}")
    return sorted(excess)


def _parsed_or_none(line: str) -> Grant | None:
    try:
        return parse_grant(line)
    except ValueError:
        return None


def _privilege_names(text: str) -> tuple[str, ...]:
    names = []
    for part in _split_top_level(_COLUMNS_RE.sub("", text)):
        name = _SPACES_RE.sub(" ", part.strip().upper())
        if name == "ALL":
            name = _ALL
        if name:
            names.append(name)
    return tuple(dict.fromkeys(names))


def _split_top_level(text: str) -> list[str]:
    """Split on commas outside backticks and quotes (role names may hold commas)."""
    parts: list[str] = []
    current: list[str] = []
    quote = ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "`'":
            quote = char
        elif char == ",":
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


def unreadable_schemas(privileges: Iterable[str], schemas: Iterable[str]) -> list[str]:
    """Of these schemas, those the account cannot SELECT from, sorted: no SELECT (or ALL)
    on ``*.*``, on the schema (a database grant's ``%``/``_`` wildcards honoured), nor on a
    table of it. ``privileges`` are :func:`granted`'s ``PRIVILEGE ON level`` strings.

    >>> unreadable_schemas(["SELECT ON `shop`.*", "PROCESS ON *.*"], ["shop", "crm"])
    ['crm']
    >>> unreadable_schemas(["ALL PRIVILEGES ON *.*"], ["crm"])
    []
    """
    levels = [
        level.strip()
        for name, _, level in (p.partition(" ON ") for p in privileges)
        if name in ("SELECT", _ALL)
    ]
    return sorted({s for s in schemas if not any(_covers(level, s) for level in levels)})


def _covers(level: str, schema: str) -> bool:
    """Whether a grant level (``*.*``, ```shop`.*``, ```shop`.`t```) reaches the schema."""
    if level == "*.*":
        return True
    database = _level_database(level)
    if database is None:
        return False
    # A database-level grant's name is a LIKE pattern: "\_" is a literal underscore.
    pattern = "".join(
        ".*" if part == "%" else "." if part == "_" else re.escape(part.lstrip("\\"))
        for part in re.findall(r"\\.|%|_|[^\\%_]+", database)
    )
    return re.fullmatch(pattern, schema, re.IGNORECASE) is not None


def _level_database(level: str) -> str | None:
    match = re.match(r"(`(?:[^`]|``)+`)\.", level) or re.match(r"([^`.\s]+)\.", level)
    return unquote_ident(match[1]) if match else None
