"""API mapping: the API forms of EXPLAIN and profile runs, as stored (examples redacted
again as they are read)."""

from typing import Any

from quanta.analysis.redact import redact
from quanta.diagnostics.models import ExplainRun, ProfileRun
from quanta.diagnostics.repository import Run
from quanta.diagnostics.schemas import (
    ExampleUsed,
    ExplainRunOut,
    FindingOut,
    ProfileRowOut,
    ProfileRunOut,
    ServerUsed,
)


def explain_out(run: ExplainRun, instance_name: str, *, pending: bool = False) -> ExplainRunOut:
    """The API form of an EXPLAIN run."""
    return ExplainRunOut(
        **_common(run, instance_name, pending),
        verb=run.verb,
        findings=[FindingOut(**finding) for finding in run.findings or []],
        tabular=run.tabular,
        document=run.document,
        analyze=run.analyze,
        notes=list(run.notes or []),
    )


def profile_out(run: ProfileRun, instance_name: str, *, pending: bool = False) -> ProfileRunOut:
    """The API form of a profile run."""
    return ProfileRunOut(
        **_common(run, instance_name, pending),
        runs=run.runs,
        response_us=run.response_us,
        lost_us=run.lost_us,
        rows=[ProfileRowOut(**row) for row in run.rows or []],
        run_response_us=list(run.run_response_us or []),
    )


def _common(run: Run, instance_name: str, pending: bool) -> dict[str, Any]:
    return {
        "id": run.id,
        "query_id": run.query_id,
        "instance": instance_name,
        "status": run.status,
        "requested_at": run.requested_at,
        "taken_at": run.taken_at,
        "error": run.error,
        "pending": pending,
        # Redacted as read too: examples stored before redaction knew a form hold it still.
        "examples": [
            ExampleUsed(**{**example, "text": redact(example["text"])})
            for example in run.examples or []
        ],
        "server_version": run.server_version,
        "ran_on": [ServerUsed(**server) for server in run.ran_on or []],
    }
