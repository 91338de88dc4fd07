"""Where an instance's slow log is, and how to make the server reopen it.

The agent asks the monitored server two things only: its slow-log file and data directory
(``@@slow_query_log_file`` is relative to ``@@datadir`` unless absolute), read through the
read-only monitoring connection, and, when it rotates the log itself, ``FLUSH
NO_WRITE_TO_BINLOG SLOW LOGS`` on a connection of its own (the monitoring connection only
ever sends SELECT and SHOW). The tailer keeps working while the server is down.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

import pymysql

from quanta.analysis.dsn import parse_dsn
from quanta_agent.config import InstanceSettings
from quanta_agent.mysql import MonitorConnection, MonitorError, connect

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_SECONDS = 5
READ_TIMEOUT_SECONDS = 30
_VARIABLES = ("slow_query_log_file", "datadir", "slow_query_log", "log_output")
_FLUSH_SQL = "FLUSH NO_WRITE_TO_BINLOG SLOW LOGS"


class LogSourceError(Exception):
    """The slow log cannot be located or flushed; the message says why."""


class SlowLogSource:
    """The slow log of one instance: from the configuration, else from the server."""

    def __init__(self, instance: InstanceSettings) -> None:
        """Describe the source; nothing connects until :meth:`locate` or :meth:`flush`."""
        self._instance = instance
        self._warned: set[str] = set()
        self._monitor: MonitorConnection | None = None

    @property
    def follows_server(self) -> bool:
        """Whether the path comes from the server (and so may change while running)."""
        return self._instance.slowlog.path is None

    def locate(self) -> Path:
        """The slow log's path now.

        Raises:
            LogSourceError: The server cannot be asked, or logs to no file.
        """
        configured = self._instance.slowlog.path
        if configured is not None:
            return configured
        try:
            values = self._monitor_connection().variables(*_VARIABLES)
        except (MonitorError, ValueError) as exc:
            raise LogSourceError(f"cannot read @@slow_query_log_file: {exc}") from exc
        file, datadir = values.get("slow_query_log_file", ""), values.get("datadir", "")
        if not file:
            raise LogSourceError(f"{self._instance.name}: the server has no slow_query_log_file")
        output = values.get("log_output", "")
        self._warn_once(values.get("slow_query_log") != "ON", "slow_query_log is OFF")
        self._warn_once("FILE" not in output.upper(), f"log_output is {output}: no file")
        path = Path(file)
        return path if path.is_absolute() else Path(datadir) / path

    def flush(self) -> None:
        """Make the server close and reopen its slow log (needs the RELOAD privilege).

        Raises:
            LogSourceError: The server refused or cannot be reached.
        """
        try:
            conn = connect(
                parse_dsn(self._dsn(), user_required=False),
                program_name="quanta-agent",
                connect_timeout=CONNECT_TIMEOUT_SECONDS,
                read_timeout=READ_TIMEOUT_SECONDS,
            )
            with contextlib.closing(conn), conn.cursor() as cursor:
                cursor.execute(_FLUSH_SQL)
        except (pymysql.err.MySQLError, ValueError) as exc:
            raise LogSourceError(f"{self._instance.name}: {_FLUSH_SQL} failed: {exc}") from exc

    def close(self) -> None:
        """Close the monitoring connection, if open."""
        if self._monitor is not None:
            self._monitor.close()

    def _monitor_connection(self) -> MonitorConnection:
        if self._monitor is None:
            self._monitor = MonitorConnection.from_dsn(self._dsn(), name=self._instance.name)
        return self._monitor

    def _dsn(self) -> str:
        if not self._instance.dsn:
            raise ValueError(f"{self._instance.name}: no dsn to reach the server")
        return self._instance.dsn

    def _warn_once(self, condition: bool, message: str) -> None:
        if condition and message not in self._warned:
            self._warned.add(message)
            log.warning("%s: %s", self._instance.name, message)
