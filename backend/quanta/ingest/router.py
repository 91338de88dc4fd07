"""HTTP endpoints of ingest: agents POST batches here."""

from typing import Annotated

from fastapi import APIRouter, Header, Request, Response, status
from starlette.concurrency import run_in_threadpool

from quanta.core.errors import PayloadTooLarge
from quanta.core.http import rate_limit
from quanta.core.openapi import inline_schema
from quanta.deps import AUTH_RESPONSES, IngestPrincipal, SessionDep, SettingsDep
from quanta.ingest import service
from quanta.ingest.schemas import IngestBatchIn, IngestBatchOut

router = APIRouter(tags=["ingest"], responses=AUTH_RESPONSES)


@router.post(
    "/ingest",
    operation_id="ingest_batch",
    status_code=status.HTTP_202_ACCEPTED,
    responses={
        200: {"description": "Already received: its current status."},
        429: {"description": "Too many batches from this token; see Retry-After."},
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "A batch as JSON, optionally with `Content-Encoding: gzip`.",
            "content": {"application/json": {"schema": inline_schema(IngestBatchIn)}},
        }
    },
)
async def ingest_batch(
    request: Request,
    response: Response,
    session: SessionDep,
    settings: SettingsDep,
    principal: IngestPrincipal,
    content_encoding: Annotated[str | None, Header()] = None,
    user_agent: Annotated[str | None, Header()] = None,
) -> IngestBatchOut:
    """Store a batch durably and queue it for processing; a resent batch_id changes nothing.

    A batch with no rows and the agent's ``agent`` status is a status report: only the
    status is kept (GET /api/v1/agents)."""
    rate_limit(request, "ingest", str(principal.token_id))
    body = await _read_body(request, limit=settings.ingest_max_body_bytes)
    # Decoding and validating a batch is CPU work: keep it off the event loop.
    decoded = await run_in_threadpool(
        service.decode_batch, body=body, content_encoding=content_encoding, settings=settings
    )
    out, created = await run_in_threadpool(
        service.accept_batch,
        session=session,
        settings=settings,
        principal=principal,
        decoded=decoded,
        user_agent=user_agent,
    )
    if not created:
        response.status_code = status.HTTP_200_OK
    return out


@router.get("/ingest/{batch_id}", operation_id="get_ingest_batch")
def get_ingest_batch(
    batch_id: str, session: SessionDep, principal: IngestPrincipal
) -> IngestBatchOut:
    """The status of a batch sent with this token."""
    return service.get_batch_status(session=session, principal=principal, batch_id=batch_id)


async def _read_body(request: Request, *, limit: int) -> bytes:
    # Stop reading as soon as the limit is passed instead of buffering an arbitrary body.
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"Body exceeds {limit} bytes.")
        chunks.append(chunk)
    return b"".join(chunks)
