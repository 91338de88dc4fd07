"""`quanta-agent`: ship MySQL/MariaDB query data to a Quanta server."""

import logging
import socket
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from quanta_agent import __version__
from quanta_agent.importer import ImportReport, import_file
from quanta_agent.policy import ExamplePolicy
from quanta_agent.shipper import ShipError, Shipper

app = typer.Typer(help="Quanta agent: ships slow logs to a Quanta server.", no_args_is_help=True)
stderr = Console(stderr=True)

# Statements folded into one batch of minute buckets: the server merges each batch's hour
# and day buckets into the stored ones, so fewer, larger batches cost it less; but a batch's
# statements wait as columns with their text until folded (~1.6 KB of RSS each,
# bench/agent_memory.py: 113 MB at 50,000), so 25,000 keeps an import under 100 MB.
DEFAULT_BATCH_SIZE = 25_000
MAX_BATCH_SIZE = 1_000_000
LOG_FORMAT = "%(asctime)s %(levelname)s %(threadName)s %(name)s: %(message)s"
QUIET_LOGGERS = ("httpx", "httpcore")


def _show_version(value: bool) -> None:
    if value:
        from quanta.analysis import native

        typer.echo(f"quanta-agent {__version__}")
        typer.echo(native.summary())
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_show_version,
            is_eager=True,
            help="Print the version and which C extensions are loaded (none: pure Python).",
        ),
    ] = False,
) -> None:
    """Quanta agent."""


@app.command("import")
def import_(
    files: Annotated[list[Path], typer.Argument(exists=True, dir_okay=False, readable=True)],
    server: Annotated[str, typer.Option(envvar="QUANTA_SERVER", help="Quanta server URL.")],
    token: Annotated[
        str, typer.Option(envvar="QUANTA_TOKEN", help="API token with the ingest scope.")
    ],
    instance: Annotated[
        str,
        typer.Option(help="Name of the server the log comes from; default: this host's name."),
    ] = socket.gethostname(),
    batch_size: Annotated[
        int, typer.Option(min=1, max=MAX_BATCH_SIZE, help="Statements per batch (at least).")
    ] = DEFAULT_BATCH_SIZE,
    examples: Annotated[
        ExamplePolicy,
        typer.Option(help="Statements sent as examples: as logged, literals masked, or none."),
    ] = ExamplePolicy.FULL,
) -> None:
    """Parse slow-log FILES and ship every statement to the server, folded per minute
    (re-importing changes nothing)."""
    shipper = Shipper(server=server, token=token, instance=instance)
    report = ImportReport()
    total_bytes = sum(f.stat().st_size for f in files)
    progress = Progress(
        TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
        console=stderr, transient=True,
    )  # fmt: skip
    try:
        with progress:
            task = progress.add_task("importing", total=total_bytes)
            for path in files:
                progress.update(task, description=path.name)
                import_file(
                    path,
                    shipper=shipper,
                    batch_size=batch_size,
                    report=report,
                    policy=examples,
                    on_bytes=lambda n: progress.advance(task, n),
                )
    except ShipError as exc:
        stderr.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(1) from exc
    finally:
        shipper.close()
    _print_report(report, files)


def _print_report(report: ImportReport, files: list[Path]) -> None:
    for path, line, reason in report.skipped[:20]:
        stderr.print(f"skipped {path}:{line}: {reason}")
    duplicates = (
        f", {report.duplicate_batches} already received" if report.duplicate_batches else ""
    )
    typer.echo(
        f"Imported {report.events} events in {report.batches} batches{duplicates} "
        f"from {len(files)} file(s); {len(report.skipped)} malformed entries skipped."
    )


@app.command("check")
def check(
    config: Annotated[
        Path | None,
        typer.Option(exists=True, dir_okay=False, help="Agent YAML config: check its instances."),
    ] = None,
    dsn: Annotated[
        list[str] | None,
        typer.Option(help="mysql://user:pass@host:port/ of a server to check; repeatable."),
    ] = None,
) -> None:
    """Tell what each server lacks for the agent and the statement that fixes it.

    Exits 0 only when every server has everything its sources need.
    """
    from quanta_agent.checks import PERSISTENCE_NOTE, check_targets, persistent_options
    from quanta_agent.config import ConfigError

    if config is None and not dsn:
        raise typer.BadParameter("give --config FILE or at least one --dsn")
    try:
        reports = check_targets(config, dsn or [])
    except (ConfigError, ValueError) as exc:
        stderr.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc
    for report in reports:
        for line in report.lines():
            typer.echo(line)
    options = persistent_options(reports)
    if options:
        typer.echo(f"Note: {PERSISTENCE_NOTE}")
        typer.echo("[mysqld]")
        for line in options:
            typer.echo(line)
    raise typer.Exit(0 if all(r.ok for r in reports) else 1)


@app.command("run")
def run(
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            envvar="QUANTA_AGENT_CONFIG",
            exists=True,
            dir_okay=False,
            help="YAML configuration file (see agent/quanta-agent.example.yaml).",
        ),
    ] = None,
    server: Annotated[str | None, typer.Option(help="Quanta server URL (key: server).")] = None,
    token: Annotated[
        str | None, typer.Option(help="API token with the ingest scope (key: token).")
    ] = None,
    spool_dir: Annotated[
        Path | None, typer.Option(help="Spool and checkpoint directory (key: spool_dir).")
    ] = None,
    from_start: Annotated[
        bool,
        typer.Option(
            "--from-start",
            help="Read slow logs from their beginning when there is no checkpoint yet "
            "(default: from their end).",
        ),
    ] = False,
    assignments: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="KEY=VALUE",
            help="Set any key, e.g. --set instances.db1.examples=masked (repeatable).",
        ),
    ] = None,
    log_level: Annotated[str, typer.Option(help="debug, info, warning or error.")] = "info",
) -> None:
    """Tail slow logs and poll performance_schema continuously; ship everything once.

    Keys come from flags, then QUANTA_* environment variables (QUANTA_SERVER,
    QUANTA_INSTANCES__DB1__DSN, ...), then the YAML file. Stops cleanly on SIGTERM.
    """
    # Imported here: `import` needs none of this, which is a third of the start-up.
    from quanta_agent.checkpoint import CheckpointError
    from quanta_agent.config import (
        ConfigError,
        load_settings,
        merge,
        parse_assignments,
        read_history,
    )
    from quanta_agent.runner import AgentRunner, AlreadyRunning

    logging.basicConfig(level=log_level.upper(), format=LOG_FORMAT)
    for chatty in QUIET_LOGGERS:  # one line per HTTP request even at debug level
        logging.getLogger(chatty).setLevel(max(logging.WARNING, logging.root.level))
    named: dict[str, Any] = {"server": server, "token": token, "spool_dir": spool_dir}
    try:
        overrides = merge(
            {k: v for k, v in named.items() if v is not None}, parse_assignments(assignments or [])
        )
        settings = load_settings(config, overrides)
        if from_start:
            settings = read_history(settings)
        runner = AgentRunner(settings)
    except (ConfigError, CheckpointError, AlreadyRunning) as exc:
        stderr.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc
    runner.run()
