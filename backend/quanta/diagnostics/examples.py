"""Example selection: the stored examples of a query fit to EXPLAIN (or to execute, for a
profile), newest first, or why none is."""

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from quanta.analysis.sqlkind import classify_statement
from quanta.core.config import Settings
from quanta.core.db import utcnow
from quanta.instances.models import Instance
from quanta.monitored.options import ConnectionOptions
from quanta.queries import service as queries
from quanta.queries.window import TimeWindow

# Stored examples read to pick from (slowest and sampled of each bucket, newest first).
EXAMPLE_CANDIDATES = 500


class ExampleRefused(Exception):
    """No stored example is fit; the message says why (the latest example's problem)."""


@dataclass(frozen=True, slots=True)
class Example:
    kind: str
    text: str
    schema_name: str
    ts: datetime
    query_time: float
    truncated: bool
    instance: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "text": self.text,
            "schema_name": self.schema_name,
            "ts": self.ts.isoformat(),
            "query_time": self.query_time,
        }


def example_window(settings: Settings) -> TimeWindow:
    now = utcnow()
    return TimeWindow(start=now - timedelta(days=settings.diagnostics_example_days), end=now)


def for_example(options: ConnectionOptions, example: Example) -> ConnectionOptions:
    # The example ran in its own default database; unqualified names resolve there.
    return replace(options, database=example.schema_name) if example.schema_name else options


def select_examples(
    session: Session,
    settings: Settings,
    query_id: str,
    instance: Instance,
    *,
    executable: bool,
    limit: int,
) -> list[Example]:
    """The newest distinct stored examples fit to explain (or execute), at most ``limit``."""
    stored = queries.query_examples(
        session=session,
        settings=settings,
        window=example_window(settings),
        query_id=query_id,
        instances=(instance.name,),
        limit=EXAMPLE_CANDIDATES,
    ).examples
    newest_first = sorted(stored, key=lambda e: e.ts, reverse=True)
    fit: list[Example] = []
    first_problem: str | None = None
    verdict = _execution_verdict if executable else _explain_verdict
    for candidate in newest_first:
        problem = (
            _MASKED.format(name=instance.name, id=instance.id)
            if candidate.literals != "full"
            else verdict(candidate.text, candidate.truncated)
        )
        if problem is not None:
            first_problem = first_problem or problem
            continue
        if all(candidate.text != chosen.text for chosen in fit):
            fit.append(
                Example(
                    kind=candidate.kind,
                    text=candidate.text,
                    schema_name=candidate.schema_name,
                    ts=candidate.ts,
                    query_time=candidate.query_time,
                    truncated=candidate.truncated,
                    instance=candidate.instance,
                )
            )
        if len(fit) == limit:
            break
    if fit:
        return fit
    if first_problem is not None:
        raise _refusal(first_problem, executable)
    raise _refusal(
        f"no example of this query from {instance.name} is stored for the last "
        f"{settings.diagnostics_example_days} days (the instance's example_policy is "
        f"'{instance.example_policy}')",
        executable,
    )


_MASKED = (
    "the examples of instance '{name}' are stored with their literals masked, and a plan "
    "needs a real statement: an admin sets PATCH /api/v1/instances/{id} "
    '{{"example_policy": "full"}}'
)


def _explain_verdict(text: str, truncated: bool) -> str | None:
    return classify_statement(text, truncated=truncated).explain_refusal


def _execution_verdict(text: str, truncated: bool) -> str | None:
    return classify_statement(text, truncated=truncated).execute_refusal


def _refusal(reason: str, executable: bool) -> ExampleRefused:
    prefix = "not profiled" if executable else "not explained"
    return ExampleRefused(f"{prefix}: {reason}")
