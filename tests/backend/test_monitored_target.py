"""When an execution target counts as read-only: MySQL 5.7/8.0 and MariaDB 10.x/11.x values."""

import pytest

from quanta.monitored.target import read_only_refusal

LEAST = ["SELECT ON *.*", "PROCESS ON *.*"]
NOT_READ_ONLY = "the execution target db:3306 is not read-only: SET GLOBAL read_only=ON there"
BYPASSED = "the execution target db:3306 is read-only, but not for Quanta's account there"
CASES = [
    # (server, variables, privileges, refusal starts with; None: accepted)
    ("MySQL 8.0 replica", {"read_only": "ON", "super_read_only": "ON"}, LEAST, None),
    (
        "MySQL 8.0 super_read_only beats SUPER",
        {"read_only": "ON", "super_read_only": "ON"},
        ["SUPER ON *.*"],
        None,
    ),
    ("MySQL 5.7 read_only", {"read_only": "ON", "super_read_only": "OFF"}, LEAST, None),
    (
        "MySQL 8.0 read_only with SUPER",
        {"read_only": "ON", "super_read_only": "OFF"},
        ["SELECT ON *.*", "SUPER ON *.*"],
        BYPASSED,
    ),
    (
        "MySQL 8.0 read_only with CONNECTION_ADMIN",
        {"read_only": "ON"},
        ["CONNECTION_ADMIN ON *.*"],
        BYPASSED,
    ),
    ("MySQL primary", {"read_only": "OFF", "super_read_only": "OFF"}, LEAST, NOT_READ_ONLY),
    ("MariaDB 10.11 read_only", {"read_only": "ON", "innodb_read_only": "OFF"}, LEAST, None),
    ("MariaDB 10.11 READ_ONLY ADMIN", {"read_only": "ON"}, ["READ_ONLY ADMIN ON *.*"], BYPASSED),
    ("MariaDB ALL PRIVILEGES", {"read_only": "ON"}, ["ALL PRIVILEGES ON *.*"], BYPASSED),
    (
        "MariaDB ALL on one schema does not bypass",
        {"read_only": "ON"},
        ["ALL PRIVILEGES ON `shop`.*"],
        None,
    ),
    ("MariaDB 11.x NO_LOCK", {"read_only": "NO_LOCK"}, LEAST, None),
    (
        "MariaDB 11.x NO_LOCK with admin",
        {"read_only": "NO_LOCK"},
        ["READ_ONLY ADMIN ON *.*"],
        BYPASSED,
    ),
    (
        "MariaDB 11.x NO_LOCK_NO_ADMIN",
        {"read_only": "NO_LOCK_NO_ADMIN"},
        ["READ_ONLY ADMIN ON *.*"],
        None,
    ),
    ("MariaDB 11.x OFF", {"read_only": "OFF"}, LEAST, NOT_READ_ONLY),
    (
        "innodb_read_only alone",
        {"read_only": "OFF", "innodb_read_only": "ON"},
        LEAST,
        "the execution target db:3306 is not read-only: innodb_read_only is ON but read_only "
        "is OFF, so MyISAM and Aria tables stay writable",
    ),
    ("numeric values", {"read_only": "1"}, LEAST, None),
    ("nothing reported", {}, LEAST, NOT_READ_ONLY),
]


@pytest.mark.parametrize(
    ("variables", "privileges", "refusal"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_read_only_refusal(
    variables: dict[str, str], privileges: list[str], refusal: str | None
) -> None:
    found = read_only_refusal("db:3306", variables, privileges)
    if refusal is None:
        assert found is None
    else:
        assert found is not None
        assert found.startswith(refusal)


UNVOUCHED = "the execution target db:3306 cannot be vouched for: Quanta's account there has roles"


@pytest.mark.parametrize(
    ("variables", "refusal"),
    [
        ({"read_only": "ON"}, UNVOUCHED),
        ({"read_only": "OFF"}, UNVOUCHED),
        ({"read_only": "ON", "super_read_only": "ON"}, None),  # read-only for everyone
        ({"read_only": "NO_LOCK_NO_ADMIN"}, None),
    ],
)
def test_roles_whose_privileges_cannot_be_read_are_refused(
    variables: dict[str, str], refusal: str | None
) -> None:
    """MySQL: an account with a role (or mandatory_roles set) is refused unless the server is
    read-only for every account (MariaDB's roles are resolved into the privileges instead)."""
    found = read_only_refusal("db:3306", variables, LEAST, unresolved_roles=["`ro`@`%`"])
    if refusal is None:
        assert found is None
    else:
        assert found is not None
        assert found.startswith(refusal)
        assert "(`ro`@`%`)" in found
