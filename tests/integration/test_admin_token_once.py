"""A real `quanta run`, started twice on one data directory: the generated admin token is
printed on the first start only (start messages land in log collectors); later starts say
where it is kept, and the token still works."""

from pathlib import Path

import pytest

from tests.fixtures.quanta import quanta_run

pytestmark = [pytest.mark.long(seconds=40), pytest.mark.timeout(240)]


def test_the_admin_token_is_printed_once_then_where_it_is_kept(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with quanta_run(data) as first:
        token = first.token
        assert token.startswith("qnt_")
        lines = [line for line in first.output if token in line]
        assert lines == [f"Admin token: {token}"], first.log_tail()
        assert f"kept in {data / 'admin-token'}" in first.log_tail()
        # The start message is the last thing on the terminal: the API, worker and beat
        # log to files it names (they printed 959 lines over it in 20 minutes).
        assert first.output[-2:] == [
            f"Logs: {data / 'logs'}/ (api.log, worker.log, beat.log; tail -f to follow)",
            "Press Ctrl-C to stop.",
        ]
        assert first.output[-5].startswith("Quanta is running at http://127.0.0.1:")
        assert first.get("/api/v1/instances").status_code == 200
        assert any("celery@" in line for line in first.log_lines()), first.log_tail()
        assert any("GET /api/v1/instances" in line for line in first.log_lines())
    with quanta_run(data) as second:
        assert second.token == token
        assert not any(token in line for line in second.output), second.log_tail()
        assert not any(token in line for line in second.log_lines())
        assert f"Admin token: kept in {data / 'admin-token'} (not shown again)." in second.output
        assert second.get("/api/v1/instances").status_code == 200
