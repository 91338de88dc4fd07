"""The agent's settings: YAML file, environment and flags, merged key by key."""

from __future__ import annotations

from pathlib import Path

import pytest

from quanta.analysis.tags import DEFAULT_TAG_KEYS
from quanta_agent.config import (
    DEFAULT_POLL_INTERVAL_SECONDS,
    ConfigError,
    ExamplePolicy,
    Source,
    load_settings,
    parse_assignments,
    read_history,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "agent" / "quanta-agent.example.yaml"

YAML = """
server: http://quanta:8000
token: qnt_file
spool_dir: /var/lib/quanta-agent
batch: {max_events: 1000}
instances:
  DB1:
    dsn: mysql://quanta:secret@10.0.0.1:3306/
    examples: masked
    slowlog: {idle_grace: 0.5}
  db2:
    dsn: mysql://quanta:secret@10.0.0.2:3306/
    sources: [perfschema]
    spool_max_mb: 10
"""


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "agent.yaml"
    path.write_text(YAML)
    return path


@pytest.fixture(autouse=True)
def no_quanta_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in [n for n in os.environ if n.startswith("QUANTA_")]:
        monkeypatch.delenv(name)


def test_yaml_file(config_file: Path) -> None:
    settings = load_settings(config_file)
    db1, db2 = settings.instances["db1"], settings.instances["db2"]
    assert (db1.name, db1.examples, db1.slowlog.idle_grace) == ("DB1", ExamplePolicy.MASKED, 0.5)
    assert db1.sources == (Source.SLOWLOG, Source.PERFSCHEMA, Source.STATS)
    assert db1.poll_interval == DEFAULT_POLL_INTERVAL_SECONDS
    assert (db2.sources, settings.batch.max_events) == ((Source.PERFSCHEMA,), 1000)
    assert settings.spool_path(db2) == Path("/var/lib/quanta-agent/db2")
    assert (settings.spool_cap_bytes(db1), settings.spool_cap_bytes(db2)) == (
        256 * 1024 * 1024,
        10 * 1024 * 1024,
    )


def test_environment_overrides_the_file_key_by_key(
    config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUANTA_TOKEN", "qnt_env")
    monkeypatch.setenv("QUANTA_INSTANCES__DB1__SLOWLOG__FROM_START", "true")
    monkeypatch.setenv("QUANTA_INSTANCES__DB2__SOURCES", "perfschema,stats")
    monkeypatch.setenv("QUANTA_BATCH__MAX_AGE", "2.5")
    settings = load_settings(config_file)
    db1 = settings.instances["db1"]
    assert settings.token == "qnt_env"
    assert (db1.slowlog.from_start, db1.slowlog.idle_grace, db1.examples.value) == (
        True,
        0.5,
        "masked",
    )
    assert settings.instances["db2"].sources == (Source.PERFSCHEMA, Source.STATS)
    assert (settings.batch.max_events, settings.batch.max_age) == (1000, 2.5)


def test_flags_override_the_environment(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUANTA_SERVER", "http://from-env:8000")
    overrides = parse_assignments(
        ["server=http://from-flag:8000", "instances.DB1.examples=off", "batch.max_age=1"]
    )
    settings = read_history(load_settings(config_file, overrides))
    assert settings.server == "http://from-flag:8000"
    assert settings.instances["db1"].examples == ExamplePolicy.OFF
    assert settings.batch.max_age == 1.0
    assert all(i.slowlog.from_start for i in settings.instances.values())


def test_environment_alone_is_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUANTA_SERVER", "https://quanta.example.com")
    monkeypatch.setenv("QUANTA_TOKEN", "qnt_x")
    monkeypatch.setenv("QUANTA_INSTANCES__DB9__DSN", "mysql://u:p@db9:3306/")
    settings = load_settings(None)
    assert list(settings.instances) == ["db9"]
    assert settings.instances["db9"].name == "db9"


def test_tag_keys_default_to_the_servers_and_are_read_as_it_reads_them(
    config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert load_settings(config_file).tag_keys == sorted(DEFAULT_TAG_KEYS)
    # The server's variable, in the same form: one setting for both on a single host.
    monkeypatch.setenv("QUANTA_TAG_KEYS", '["Route", " team ", ""]')
    assert load_settings(config_file).tag_keys == ["route", "team"]


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        ("server: http://q\ntoken: t\ninstances: {}", "instances"),
        ("server: quanta:8000\ntoken: t\ninstances: {db1: {dsn: 'mysql://h/'}}", "server"),
        ("server: http://q\ntoken: t\ninstances: {db1: {sources: [stats]}}", "dsn is required"),
        (
            "server: http://q\ntoken: t\ninstances: {db1: {dsn: 'mysql://h/', exampels: off}}",
            "exampels",
        ),
        (
            "server: http://q\ntoken: t\nspool_max_mb: 1\n"
            "instances: {db1: {dsn: 'mysql://h/'}}\nbatch: {max_bytes: 5000000}",
            "spool cap is smaller than one batch",
        ),
        ("- a\n- b\n", "mapping"),
    ],
)
def test_invalid_configuration_says_what_is_wrong(
    tmp_path: Path, yaml_text: str, message: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml_text)
    with pytest.raises(ConfigError, match=message):
        load_settings(path)


def test_set_needs_a_key_and_a_value() -> None:
    with pytest.raises(ConfigError, match=r"key\.path=value"):
        parse_assignments(["instances.db1.dsn"])


def test_the_example_file_is_valid() -> None:
    settings = load_settings(EXAMPLE)
    assert settings.instances["db1"].dsn == "mysql://quanta:change-me@127.0.0.1:3306/"
    assert settings.instances["db1"].slowlog.rotate_above_mb == 1024
