"""`quanta`: run the server, migrate, digest slow logs offline, export the OpenAPI schema."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, TypeVar

import typer

from quanta.auth.cli import token_app, user_app
from quanta.core.sources import configured

if TYPE_CHECKING:
    from quanta.core.config import Settings

# Loading the settings (pydantic-settings) costs most of a short command's start-up: each
# command imports quanta.core.config when it runs, and `quanta digest` and `quanta
# fingerprint` only where something configures Quanta (see _grouping_rules).

app = typer.Typer(help="Quanta query analytics server.", no_args_is_help=True)
app.add_typer(user_app, name="user")
app.add_typer(token_app, name="token")

HEALTH_WAIT_SECONDS = 60.0
CHILD_STOP_SECONDS = 15.0
ADMIN_TOKEN_FILE = "admin-token"
DEFAULT_DIGEST_LIMIT = 20
MAX_SKIPPED_SHOWN = 20
DEFAULT_SERVER = "http://127.0.0.1:8000"
ANNOTATE_TIMEOUT_SECONDS = 10.0
# `quanta run`'s children, and where their logs go (under the data directory).
CHILDREN = ("api", "worker", "beat")
RUN_LOG_DIR = "logs"
FAILED_CHILD_LOG_LINES = 40
# The last line of the start message: the tests (and scripts) wait for it.
READY_LINE = "Press Ctrl-C to stop."

Children = dict[str, subprocess.Popen[bytes]]
_N = TypeVar("_N", int, float)

if TYPE_CHECKING:
    from quanta.analysis.advisor.workload import PlanRules


def _show_version(value: bool) -> None:
    if value:
        from quanta import __version__
        from quanta.analysis import native

        typer.echo(f"quanta {__version__}")
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
            help="Print the version and which C extensions are loaded, then exit.",
        ),
    ] = False,
) -> None:
    """Quanta query analytics server."""


@app.command()
def migrate() -> None:
    """Bring the metric store's schema up to date."""
    from quanta.core.config import get_settings
    from quanta.core.migrate import upgrade_to_head

    settings = get_settings()
    upgrade_to_head(settings)
    _prepare_partitions(settings)
    typer.echo(f"Migrated {_redact(settings.database_url_resolved)} to the newest revision.")


def _prepare_partitions(settings: "Settings") -> None:
    """Create the metric store's time partitions up to now (PostgreSQL; beat keeps them)."""
    from quanta.core.db import create_db_engine, create_session_factory, session_scope, utcnow
    from quanta.queries.partitions import maintain_partitions

    engine = create_db_engine(settings)
    try:
        with session_scope(create_session_factory(engine)) as session:
            maintain_partitions(session=session, settings=settings, now=utcnow())
    finally:
        engine.dispose()


@app.command()
def serve() -> None:
    """Run the API only (no worker, no beat)."""
    import uvicorn

    from quanta.core.config import get_settings
    from quanta.core.files import ensure_data_dir
    from quanta.core.observability import configure_logging, enter_metrics_mode, uvicorn_log_config

    settings = get_settings()
    configure_logging(settings)
    _log_native_code()
    ensure_data_dir(settings)  # before the metrics directory, which may be inside it
    enter_metrics_mode(settings, fresh=False)  # worker processes may share the directory
    if settings.admin_token:
        _register_admin_token(settings, settings.admin_token.get_secret_value())
    # On SIGTERM uvicorn stops accepting, finishes the requests in flight, then exits.
    uvicorn.run(
        "quanta.main:create_app",
        factory=True,
        host=settings.host,
        port=settings.port,
        log_config=uvicorn_log_config(settings),
        # The app reads X-Forwarded-* itself, only from QUANTA_TRUSTED_PROXIES (ProxyHeaders);
        # uvicorn's own reading would trust 127.0.0.1 whatever that setting says.
        proxy_headers=False,
    )


@app.command()
def worker(
    concurrency: Annotated[
        int | None, typer.Option(min=1, help="Pool processes; default QUANTA_WORKER_CONCURRENCY.")
    ] = None,
    queues: Annotated[
        str | None, typer.Option(help="Comma-separated queues; default all (ingest,analysis,...).")
    ] = None,
) -> None:
    """Run a Celery worker; start several (any host) to scale out. SIGTERM finishes tasks."""
    from quanta.core.tasks import QUEUES

    settings = _celery_process_settings()
    _log_native_code()
    from quanta_worker.celery_app import app as celery_app

    celery_app.worker_main(
        ["worker", "--queues", queues or ",".join(QUEUES),
         "--concurrency", str(concurrency or settings.worker_concurrency),
         "--loglevel", settings.log_level]
    )  # fmt: skip


@app.command()
def beat() -> None:
    """Run the periodic scheduler; exactly one per deployment."""
    settings = _celery_process_settings()  # makes the data dir for the schedule file
    from quanta_worker.beat_app import app as celery_app

    celery_app.start(
        ["beat", "--loglevel", settings.log_level,
         "--schedule", str(settings.data_dir / "celerybeat-schedule")]
    )  # fmt: skip


def _log_native_code() -> None:
    """Say at start which C extensions this process runs (the rest falls back to Python)."""
    import logging

    from quanta.analysis import native

    logging.getLogger(__name__).info("%s", native.summary())


def _celery_process_settings() -> "Settings":
    """The settings of a worker or beat process, with its logging and metrics set up."""
    from quanta.core.config import get_settings
    from quanta.core.files import ensure_data_dir
    from quanta.core.observability import (
        configure_logging,
        enter_metrics_mode,
        log_format,
        take_over_celery_logging,
    )

    settings = get_settings()
    configure_logging(settings)
    if log_format(settings) == "json":
        take_over_celery_logging(settings)
    ensure_data_dir(settings)
    enter_metrics_mode(settings, fresh=False)
    return settings


@app.command()
def run() -> None:
    """Migrate, then run the API, a Celery worker and beat until Ctrl-C.

    Their logs go to files in the data directory (``logs/api.log``, ``worker.log``,
    ``beat.log``): the start message, with the URL and where the admin token is, stays the
    last thing on the terminal, and a process that exits has its log's tail shown."""
    from quanta.core.config import get_settings
    from quanta.core.files import ensure_data_dir
    from quanta.core.migrate import upgrade_to_head
    from quanta.core.observability import configure_logging, enter_metrics_mode

    settings = get_settings()
    configure_logging(settings)
    ensure_data_dir(settings)
    # The children (API, worker, beat) share their metrics through this fresh directory.
    enter_metrics_mode(settings, fresh=True)
    upgrade_to_head(settings)
    _prepare_partitions(settings)
    token_line = _admin_token_line(settings)
    if not (settings.ui_dist / "index.html").is_file():
        typer.echo(f"warning: UI not built ({settings.ui_dist}); run `make install`.", err=True)
    logs = _child_logs(settings)
    children = {
        name: subprocess.Popen(cmd, stdout=logs[name], stderr=subprocess.STDOUT)
        for name, cmd in _child_commands(settings).items()
    }
    url = f"http://{settings.host}:{settings.port}/"
    try:
        _wait_healthy(url + "healthz", children, logs)
        typer.echo(f"Quanta is running at {url}")
        typer.echo(token_line)
        files = ", ".join(f"{name}.log" for name in logs)
        typer.echo(f"Logs: {Path(logs['api'].name).parent}/ ({files}; tail -f to follow)")
        typer.echo(READY_LINE)
        _wait_for_exit_or_signal(children, logs)
    finally:
        _stop(children)
        for log in logs.values():
            log.close()


@app.command()
def openapi(
    output: Annotated[Path | None, typer.Option(help="File to write; default stdout.")] = None,
) -> None:
    """Print the API's OpenAPI schema (the UI's client is generated from it)."""
    from quanta.main import create_app

    schema = json.dumps(create_app().openapi(), indent=2, sort_keys=True) + "\n"
    if output:
        output.write_text(schema)
    else:
        sys.stdout.write(schema)


class ReportFormat(StrEnum):
    """Output of `quanta digest`."""

    text = "text"
    json = "json"


@app.command()
def digest(
    files: Annotated[list[Path], typer.Argument(exists=True, dir_okay=False, readable=True)],
    output: Annotated[ReportFormat, typer.Option("--format", help="Report format.")] = (
        ReportFormat.text
    ),
    limit: Annotated[
        int, typer.Option(min=0, help="Classes to report, worst first; 0 for all.")
    ] = DEFAULT_DIGEST_LIMIT,
    since: Annotated[
        str | None, typer.Option(help="Only events from this time (2024-01-02T03:00, 12h, 7d).")
    ] = None,
    until: Annotated[str | None, typer.Option(help="Only events before this time.")] = None,
    group: Annotated[
        list[str] | None,
        typer.Option(help="Grouping rule PATTERN=REPLACEMENT for names (repeatable)."),
    ] = None,
    jobs: Annotated[
        int, typer.Option(min=1, help="Processes reading large files in parallel.")
    ] = os.cpu_count() or 1,
) -> None:
    """Report the query classes of slow-log FILES, as pt-query-digest does, only faster."""
    from quanta.digest.report import render_text, to_json
    from quanta.digest.runner import DigestOptions, digest_files
    from quanta.digest.timebound import parse_time_bound

    try:
        options = DigestOptions(
            rules=(*_grouping_rules(), *(group or ())),
            since=parse_time_bound(since) if since else None,
            until=parse_time_bound(until) if until else None,
            jobs=jobs,
        )
        with _progress_bar(sum(f.stat().st_size for f in files)) as advance:
            run = digest_files(files, options, on_bytes=advance)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    for path, line, reason in run.skipped[:MAX_SKIPPED_SHOWN]:
        typer.echo(f"skipped {path}:{line}: {reason}", err=True)
    if output is ReportFormat.json:
        typer.echo(json.dumps(to_json(run, limit), ensure_ascii=False))
    else:
        typer.echo(render_text(run, [str(f) for f in files], limit), nl=False)


def _grouping_rules() -> tuple[str, ...]:
    """The configured grouping rules (QUANTA_GROUPING_RULES): none where nothing configures
    Quanta (no QUANTA_* variable, no .env), the default, told without loading the settings."""
    if not configured():
        return ()
    from quanta.core.config import get_settings

    return tuple(get_settings().grouping_rules)


@contextlib.contextmanager
def _progress_bar(total_bytes: int) -> Iterator[Callable[[int], None]]:
    """A progress bar on stderr (shown only on a terminal); yields the function to advance it."""
    if not sys.stderr.isatty():
        yield lambda _n: None  # no bar to draw: spare the start-up cost of rich
        return
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    progress = Progress(
        BarColumn(), DownloadColumn(), TimeRemainingColumn(),
        console=Console(stderr=True), transient=True,
    )  # fmt: skip
    with progress:
        task = progress.add_task("reading", total=total_bytes)
        yield lambda n: progress.advance(task, n)


@app.command()
def fingerprint(
    statements: Annotated[
        list[str] | None, typer.Argument(help="SQL statements; default: one per line of stdin.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    group: Annotated[
        list[str] | None,
        typer.Option(help="Grouping rule PATTERN=REPLACEMENT for names (repeatable)."),
    ] = None,
) -> None:
    """Print QUERY_ID<TAB>FINGERPRINT for each statement."""
    from quanta.analysis.fingerprinter import Fingerprinter
    from quanta.analysis.grouping import parse_rules

    try:
        rules = parse_rules((*_grouping_rules(), *(group or ())))
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    fingerprinter = Fingerprinter(rules)
    lines = statements if statements else (line.rstrip("\r\n") for line in sys.stdin)
    for sql in lines:
        text, query_id = fingerprinter(sql)
        if as_json:
            typer.echo(json.dumps({"query_id": query_id, "fingerprint": text}, ensure_ascii=False))
        else:
            typer.echo(f"{query_id}\t{text}")


@app.command()
def advise(
    schema_file: Annotated[
        Path, typer.Option("--schema", help="Schema snapshot (JSON) of the tables involved.")
    ],
    sql: Annotated[
        str | None, typer.Option("--sql", help="The statement: an example or fingerprint.")
    ] = None,
    workload: Annotated[
        Path | None,
        typer.Option(
            "--workload",
            exists=True,
            dir_okay=False,
            readable=True,
            help="A slow log: its digest report, then an index plan for the whole workload.",
        ),
    ] = None,
    database: Annotated[
        str | None, typer.Option("--database", "-d", help="Database of unqualified tables.")
    ] = None,
    usage_file: Annotated[
        Path | None,
        typer.Option("--usage", help='Index usage JSON: [{"table", "index", "count"}, ...].'),
    ] = None,
    max_new_indexes: Annotated[
        int | None,
        typer.Option(min=0, help="With --workload: new indexes per table at most (default 3)."),
    ] = None,
    width_budget: Annotated[
        int | None,
        typer.Option(min=0, help="With --workload: bytes per row a table's new indexes take."),
    ] = None,
    min_gain_share: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            max=1.0,
            help="With --workload: the share of the workload's rows examined a new index must "
            "save (default 0.005).",
        ),
    ] = None,
    write_entry_cost: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            help="With --workload: rows examined one index entry maintained costs (default 10).",
        ),
    ] = None,
    limit: Annotated[
        int, typer.Option(min=0, help="With --workload: classes to report, worst first; 0: all.")
    ] = DEFAULT_DIGEST_LIMIT,
    as_json: Annotated[bool, typer.Option("--json", help="Print the advice as JSON.")] = False,
) -> None:
    """Suggest the indexes a statement needs (--sql), or a slow log's workload (--workload)."""
    from quanta.analysis.advisor import AdviceError, SchemaError, advise, parse_schema
    from quanta.analysis.advisor import review_indexes as review
    from quanta.analysis.advisor.render import advice_to_json, render_text

    if (sql is None) == (workload is None):
        raise typer.BadParameter("pass either --sql or --workload", param_hint="--sql")
    if workload is not None:
        if as_json:
            raise typer.BadParameter("--json is for --sql", param_hint="--json")
        from quanta.analysis.advisor.workload import PlanRules

        default = PlanRules()
        rules = PlanRules(
            max_new_indexes=_given(max_new_indexes, default.max_new_indexes),
            width_budget_bytes=width_budget,
            min_gain_share=_given(min_gain_share, default.min_gain_share),
            write_entry_cost=_given(write_entry_cost, default.write_entry_cost),
        )
        _advise_workload(workload, schema_file, rules, limit)
        return
    assert sql is not None
    try:
        schema = parse_schema(_read_json(schema_file, "schema snapshot"))
        usage = _index_usage(_read_json(usage_file, "usage")) if usage_file else None
        advice = advise(sql, schema, database)
        findings = review(schema, sorted({a.table for a in advice}), usage)
    except (AdviceError, SchemaError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if as_json:
        typer.echo(json.dumps(advice_to_json(advice, findings), indent=2, ensure_ascii=False))
    else:
        typer.echo(render_text(advice, findings), nl=False)


def _given(value: _N | None, default: _N) -> _N:
    return default if value is None else value


def _advise_workload(log: Path, schema_file: Path, rules: "PlanRules", limit: int) -> None:
    """pt-query-digest's report of the log, then the index plan of its workload per table."""
    from quanta.analysis.advisor import SchemaError, parse_schema
    from quanta.analysis.advisor.render import render_plan_text
    from quanta.analysis.advisor.workload import plan_workload
    from quanta.digest.report import render_text
    from quanta.digest.runner import DigestOptions, digest_files
    from quanta.digest.workload import workload_from_digest

    try:
        schema = parse_schema(_read_json(schema_file, "schema snapshot"))
    except SchemaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    options = DigestOptions(rules=_grouping_rules(), jobs=1)
    run = digest_files([log], options)
    for path, line, reason in run.skipped[:MAX_SKIPPED_SHOWN]:
        typer.echo(f"skipped {path}:{line}: {reason}", err=True)
    found = workload_from_digest(run.digest, schema)
    plans = plan_workload(
        found.queries, schema, found.writes, rules, window_seconds=found.window_seconds
    )
    typer.echo(render_text(run, [str(log)], limit), nl=False)
    typer.echo("")
    typer.echo(f"# Index plan ({found.window_seconds:,.0f} s of log)")
    typer.echo(render_plan_text(plans), nl=False)


@app.command()
def annotate(
    text: Annotated[str, typer.Argument(help="What happened, e.g. 'Started ALTER TABLE ...'.")],
    tag: Annotated[list[str] | None, typer.Option("--tag", help="A tag (repeatable).")] = None,
    instance: Annotated[
        list[str] | None,
        typer.Option("--instance", help="An instance it is about (repeatable); default all."),
    ] = None,
    when: Annotated[
        str | None,
        typer.Option("--time", help="When (ISO 8601, naive is UTC, or now-5m); default now."),
    ] = None,
    end_time: Annotated[
        str | None, typer.Option("--end-time", help="End of a ranged annotation.")
    ] = None,
    server: Annotated[
        str, typer.Option(envvar="QUANTA_SERVER", help="The Quanta server's URL.")
    ] = DEFAULT_SERVER,
    token: Annotated[
        str | None, typer.Option(envvar="QUANTA_TOKEN", help="A token with the annotate scope.")
    ] = None,
    timeout: Annotated[float, typer.Option(min=0.1, help="Seconds to wait for an answer.")] = (
        ANNOTATE_TIMEOUT_SECONDS
    ),
) -> None:
    """Mark a deploy or schema change on every chart; prints the stored annotation's id."""
    from quanta.annotations.client import AnnotateError, confirmation, parse_when, post_annotation

    if not token:
        raise typer.BadParameter("no token: pass --token or set QUANTA_TOKEN", param_hint="--token")
    body: dict[str, object] = {"text": text, "tags": tag or [], "instances": instance or []}
    try:
        if when:
            body["time"] = parse_when(when)
        if end_time:
            body["end_time"] = parse_when(end_time)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    try:
        stored = post_annotation(server=server, token=token, body=body, timeout=timeout)
    except AnnotateError as exc:
        raise typer.Exit(_fail(str(exc))) from None
    typer.echo(confirmation(stored))


def _read_json(path: Path, what: str) -> object:
    """Read a JSON file; a missing or invalid file exits with code 2 and says why."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        typer.echo(f"error: cannot read the {what} {path}: {exc}", err=True)
        raise typer.Exit(2) from None


def _index_usage(data: object) -> dict[str, dict[str, int]]:
    """[{"table": "db.t", "index": "i", "count": 3}, ...] as counts by table and index."""
    from quanta.analysis.advisor import SchemaError

    usage: dict[str, dict[str, int]] = {}
    rows = data if isinstance(data, list) else [None]
    for row in rows:
        if not (isinstance(row, dict) and isinstance(row.get("count"), int)):
            raise SchemaError('usage must be a list of {"table", "index", "count"} objects')
        table = str(row.get("table", "")).lower()
        usage.setdefault(table, {})[str(row.get("index", "")).lower()] = row["count"]
    return usage


def _admin_token_line(settings: "Settings") -> str:
    """Register the admin token; the start message's line about it.

    QUANTA_ADMIN_TOKEN if set, else the one generated on first start and kept (0600) in the
    data dir. The token itself is printed only when it is generated: start messages land in
    log collectors, so later starts say where it is kept instead.
    """
    from quanta.core.files import private_file
    from quanta.core.security import generate_token

    if settings.admin_token:
        _register_admin_token(settings, settings.admin_token.get_secret_value())
        return "Admin token: the one set in QUANTA_ADMIN_TOKEN."
    token_file = settings.data_dir / ADMIN_TOKEN_FILE
    generated = not token_file.exists()
    if generated:
        private_file(token_file)
        token_file.write_text(generate_token())
    token = token_file.read_text().strip()
    _register_admin_token(settings, token)
    if generated:
        return (
            f"Admin token: {token}\n"
            f"(shown this once; it is kept in {token_file}, readable by this user only)"
        )
    return f"Admin token: kept in {token_file} (not shown again)."


def _register_admin_token(settings: "Settings", token: str) -> None:
    from quanta.auth.service import ensure_admin_token
    from quanta.core.db import create_db_engine, create_session_factory, session_scope

    engine = create_db_engine(settings)
    with session_scope(create_session_factory(engine)) as session:
        ensure_admin_token(session=session, token=token)
    engine.dispose()


def _child_commands(settings: "Settings") -> dict[str, list[str]]:
    from quanta.core.tasks import QUEUES

    python = sys.executable
    celery = [python, "-m", "celery", "-A"]
    return {
        "api": [python, "-m", "uvicorn", "quanta.main:create_app", "--factory",
                "--host", settings.host, "--port", str(settings.port), "--no-proxy-headers"],
        "worker": [*celery, "quanta_worker.celery_app", "worker", "--queues", ",".join(QUEUES),
                   "--concurrency", str(settings.worker_concurrency), "--loglevel", "INFO"],
        "beat": [*celery, "quanta_worker.beat_app", "beat", "--loglevel", "INFO",
                 "--schedule", str(settings.data_dir / "celerybeat-schedule")],
    }  # fmt: skip


def _child_logs(settings: "Settings") -> dict[str, IO[bytes]]:
    """The log file of each child of `quanta run`, opened for appending (0600, in the
    data directory's ``logs/``)."""
    from quanta.core.files import private_dir, private_file

    directory = private_dir(settings.data_dir / RUN_LOG_DIR)
    logs: dict[str, IO[bytes]] = {}
    for name in CHILDREN:
        path = directory / f"{name}.log"
        private_file(path)
        logs[name] = path.open("ab", buffering=0)
    return logs


def _log_tail(log: IO[bytes], lines: int = FAILED_CHILD_LOG_LINES) -> str:
    """The last lines of a child's log file, to show why it exited."""
    text = Path(log.name).read_text(encoding="utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])


def _exited(name: str, child: subprocess.Popen[bytes], log: IO[bytes]) -> int:
    typer.echo(_log_tail(log), err=True)
    return _fail(f"the {name} process exited with {child.returncode} (its log: {log.name})")


def _wait_healthy(url: str, children: Children, logs: dict[str, IO[bytes]]) -> None:
    import httpx  # here, not at the top: `quanta digest` starts faster without it

    deadline = time.monotonic() + HEALTH_WAIT_SECONDS
    # One client for every try: each new one builds a TLS context, 35 ms of CPU.
    with httpx.Client(timeout=1.0) as client:
        while time.monotonic() < deadline:
            for name, child in children.items():
                if child.poll() is not None:
                    raise typer.Exit(_exited(name, child, logs[name]))
            try:
                if client.get(url).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
    raise typer.Exit(_fail(f"the API did not answer {url} within {HEALTH_WAIT_SECONDS:.0f} s"))


def _wait_for_exit_or_signal(children: Children, logs: dict[str, IO[bytes]]) -> None:
    stop_requested = False

    def request_stop(_signum: int, _frame: object) -> None:
        nonlocal stop_requested
        stop_requested = True

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    while not stop_requested:
        for name, child in children.items():
            if child.poll() is not None:
                raise typer.Exit(_exited(name, child, logs[name]))
        time.sleep(0.5)


def _stop(children: Children) -> None:
    for child in children.values():
        if child.poll() is None:
            child.terminate()
    deadline = time.monotonic() + CHILD_STOP_SECONDS
    for child in children.values():
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def _fail(message: str) -> int:
    typer.echo(f"error: {message}", err=True)
    return 1


def _redact(url: str) -> str:
    # Never print a password from a DSN.
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
