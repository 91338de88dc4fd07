"""Pure parts of quanta.monitored.plans: reading EXPLAIN FORMAT=JSON as servers write it."""

from __future__ import annotations

import pytest

from quanta.monitored.errors import ServerError
from quanta.monitored.plans import _document


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        # MariaDB escapes a quote in a string constant as \' (not JSON).
        (r"""{"c": "t.note = 'a\' , f() -- '"}""", {"c": "t.note = 'a' , f() -- '"}),
        (r'{"c": "x\\", "d": "y\\\'z"}', {"c": "x\\", "d": "y\\'z"}),
    ],
)
def test_explain_json_as_servers_write_it(text: str, expected: dict[str, object]) -> None:
    assert _document([{"EXPLAIN": text}]) == expected


@pytest.mark.parametrize("text", ["[1]", "{not json"])
def test_a_document_that_is_not_a_json_object_is_a_server_error(text: str) -> None:
    with pytest.raises(ServerError):
        _document([{"EXPLAIN": text}])
