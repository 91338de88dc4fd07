"""`quanta-agent`: ship MySQL/MariaDB query data to a Quanta server."""

import socket
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from quanta_agent.importer import ImportReport, import_file
from quanta_agent.shipper import ShipError, Shipper

app = typer.Typer(help="Quanta agent: ships slow logs to a Quanta server.", no_args_is_help=True)
stderr = Console(stderr=True)

DEFAULT_BATCH_SIZE = 5000


@app.callback()
def main() -> None:
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
    batch_size: Annotated[int, typer.Option(min=1, max=50_000)] = DEFAULT_BATCH_SIZE,
) -> None:
    """Parse slow-log FILES and ship every event to the server (re-importing changes nothing)."""
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
