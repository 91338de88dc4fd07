"""Quanta's own statements: what its workers and agent send to a monitored server (EXPLAIN,
privilege and variable probes, schema snapshots, performance_schema polls, session set-up).

They are real load on the server, but not the application's: top lists, impact views and
advice leave them out unless asked (quanta.queries.window.BucketFilter.include_own).
The patterns are SQL LIKE patterns on the lower-case fingerprint, so the store can apply them.
"""

from fnmatch import fnmatchcase
from functools import lru_cache

# Each is matched against the whole fingerprint, as SQL LIKE reads it ("%": any run of
# characters, "_": any one character).
OWN_FINGERPRINTS = (
    "explain %",
    "analyze format=%",
    "show grants%",
    "show variables%",
    "show global variables%",
    "show global status%",
    "show session variables%",
    "show index from %",
    "show create table %",
    "show table status%",
    "show profile%",
    "show slave status%",
    "show replica status%",
    "set session time_zone%",
    "set session transaction read only%",
    "set session max_statement_time%",
    "set session max_execution_time%",
    "select current_user()%",
    "select version()%",
    "select @@global.performance_schema%",
    "select %from performance_schema.%",
    "select %from information_schema.%",
    "truncate table performance_schema.%",
)


@lru_cache(maxsize=65_536)  # a worker meets the same classes batch after batch
def is_own(fingerprint: str) -> bool:
    """Whether a fingerprint is one of Quanta's own statements (OWN_FINGERPRINTS).

    >>> is_own("explain select * from orders where id = ?")
    True
    >>> is_own("select * from orders where id = ?")
    False
    """
    text = fingerprint.lower()
    # As LIKE reads them: "%" any run of characters, "_" any one character.
    return any(
        fnmatchcase(text, pattern.replace("%", "*").replace("_", "?"))
        for pattern in OWN_FINGERPRINTS
    )
