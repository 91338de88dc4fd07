"""docker-compose.yml without Docker: the services a deployment needs, commands that exist,
QUANTA_* variables each program reads, health checks, volumes, a worker that scales."""

import re
from pathlib import Path
from typing import Any

import pytest
import typer
from pydantic import BaseModel

from quanta.cli import app as quanta_cli
from quanta.core.config import REPO_ROOT, Settings
from quanta_agent.cli import app as agent_cli
from quanta_agent.config import AgentSettings, load_settings
from tests.helpers import parse_yaml

COMPOSE = REPO_ROOT / "docker-compose.yml"
SERVICES = {
    "postgres", "redis", "migrate", "api", "worker", "beat",
    "demo-mariadb", "demo-agent", "demo-load",
}  # fmt: skip
LONG_RUNNING = SERVICES - {"migrate", "demo-load"}
# What `docker compose` substitutes for ${VAR:?...} when the operator follows the header.
OPERATOR_ENV = {
    "QUANTA_ADMIN_TOKEN": "9f" * 24,
    "QUANTA_SECRET_KEY": "ZmDfcTF7_60GrrY167zsiPd67pEvs0aGOv2oasOM1Pg=",
}
PROGRAMS: dict[str, typer.Typer] = {"quanta": quanta_cli, "quanta-agent": agent_cli}


def interpolate(value: str) -> str:
    """Compose's ${VAR:?error} and ${VAR:-default} with OPERATOR_ENV set."""

    def one(match: re.Match[str]) -> str:
        name, op, rest = match[1], match[2], match[3]
        if name in OPERATOR_ENV:
            return OPERATOR_ENV[name]
        assert op == ":-", f"${{{name}}} has no default and the header does not set it"
        return rest

    return re.sub(r"\$\{([A-Z_]+)(:[?-])?([^}]*)\}", one, value)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data: dict[str, Any] = parse_yaml(COMPOSE.read_text())
    return data


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    result: dict[str, dict[str, Any]] = compose["services"]
    return result


def environment(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {k: interpolate(str(v)) for k, v in env.items()}


def quanta_image(service: dict[str, Any]) -> bool:
    return service.get("image") == "quanta:dev"


def test_every_service_is_there(services: dict[str, dict[str, Any]]) -> None:
    assert set(services) >= SERVICES


def test_commands_are_real_subcommands(services: dict[str, dict[str, Any]]) -> None:
    checked = 0
    for name, service in services.items():
        command = service.get("command")
        if not (quanta_image(service) and isinstance(command, list)):
            continue
        program, subcommand, *options = command
        group = typer.main.get_command(PROGRAMS[program])
        assert hasattr(group, "commands")
        assert subcommand in group.commands, f"{name}: `{program} {subcommand}` does not exist"
        known = {opt for p in group.commands[subcommand].params for opt in p.opts}
        for option in options:
            if option.startswith("--"):
                assert option.split("=")[0] in known, f"{name}: {program} {subcommand} {option}"
        checked += 1
    assert checked == 7  # migrate, api, api-2, worker, ingest-worker, beat, demo-agent


def test_server_variables_exist_in_the_settings(
    services: dict[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, service in services.items():
        command = service.get("command") or []
        if not (quanta_image(service) and command and command[0] == "quanta"):
            continue
        env = environment(service)
        for key in env:
            assert key.startswith("QUANTA_"), f"{name}: {key}"
            assert key.removeprefix("QUANTA_").lower() in Settings.model_fields, f"{name}: {key}"
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        settings = Settings(_env_file=None)
        assert settings.env == "production"
        assert settings.database_url_resolved.startswith("postgresql+psycopg://")
        assert settings.broker_url.startswith("redis://")


def agent_field(model: type[BaseModel], path: list[str]) -> bool:
    """Whether QUANTA_A__B__C names a field of the agent's (nested) settings."""
    field = model.model_fields.get(path[0])
    if field is None:
        return False
    rest = path[1:]
    if not rest:
        return True
    annotation = field.annotation
    if path[0] == "instances":  # a dict keyed by instance name
        from quanta_agent.config import InstanceSettings

        return len(rest) >= 2 and agent_field(InstanceSettings, rest[1:])
    return (
        isinstance(annotation, type)
        and issubclass(annotation, BaseModel)
        and (agent_field(annotation, rest))
    )


def test_agent_is_configured_by_variables_it_reads(
    services: dict[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    env = environment(services["demo-agent"])
    for key in env:
        path = key.removeprefix("QUANTA_").lower().split("__")
        assert agent_field(AgentSettings, path), key
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    settings = load_settings(None)
    demo = settings.instances["demo"]
    assert demo.slowlog.path == Path("/var/log/mysql/slow.log")
    assert {s.value for s in demo.sources} == {"slowlog", "perfschema", "stats"}
    # It reads the log the demo MariaDB writes.
    mariadb = services["demo-mariadb"]
    assert "--slow-query-log-file=/var/log/mysql/slow.log" in mariadb["command"]
    shared = {v.split(":")[0] for v in mariadb["volumes"]} & {
        v.split(":")[0] for v in services["demo-agent"]["volumes"]
    }
    assert "slowlog" in shared


def test_demo_mariadb_logs_everything_with_performance_schema(
    services: dict[str, dict[str, Any]],
) -> None:
    flags = services["demo-mariadb"]["command"]
    for flag in ("--slow-query-log=ON", "--long-query-time=0", "--performance-schema=ON"):
        assert flag in flags


def test_health_checks_and_volumes(
    compose: dict[str, Any], services: dict[str, dict[str, Any]]
) -> None:
    for name in LONG_RUNNING:
        check = services[name].get("healthcheck")
        assert check, f"{name} has no healthcheck"
        assert check["test"][0] in ("CMD", "CMD-SHELL")
    declared = set(compose["volumes"])
    used = {
        volume.split(":")[0]
        for service in services.values()
        for volume in service.get("volumes", [])
        if not volume.startswith(("/", "."))
    }
    assert used == declared
    for state in ("pgdata", "redisdata", "agentspool", "metrics"):
        assert state in used
    for name, service in services.items():
        for dependency in service.get("depends_on", {}):
            assert dependency in services, f"{name} depends on unknown {dependency}"


def test_the_worker_scales_and_apis_wait_for_migrations(
    services: dict[str, dict[str, Any]],
) -> None:
    worker = services["worker"]
    # `docker compose up --scale worker=N` needs no fixed name and no host port.
    assert "container_name" not in worker
    assert "ports" not in worker
    for name in ("api", "worker", "beat"):
        assert services[name]["depends_on"]["migrate"] == {
            "condition": "service_completed_successfully"
        }
    assert services["worker"]["stop_grace_period"]  # time to finish running tasks
    # The metrics volume is shared so that the API's /metrics includes the workers'.
    for name in ("api", "worker", "beat"):
        assert "metrics:/var/lib/quanta/metrics" in services[name]["volumes"]
