"""Quanta: query analytics for MySQL, Percona Server and MariaDB."""

__version__ = "0.1.0"
