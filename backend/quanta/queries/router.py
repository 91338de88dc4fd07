"""HTTP endpoints of query analytics."""

import dataclasses
from typing import Annotated

from fastapi import APIRouter, Depends, Query

from quanta.deps import (
    AUTH_RESPONSES,
    ErrorDetail,
    ReadPrincipal,
    SessionDep,
    SettingsDep,
)
from quanta.queries import classes, groups, service
from quanta.queries.schemas import ClassCap, Filters, QueryDetail, QueryExamples, TopQueries
from quanta.queries.window import BucketFilter, TimeWindow, parse_pairs, resolve_window

# Bounded so one request cannot ask for the whole catalog with its sparklines.
MAX_ROWS_PER_PAGE = 1000
MAX_EXAMPLES = 100
DEFAULT_EXAMPLES = 20

router = APIRouter(
    tags=["queries"],
    responses={
        **AUTH_RESPONSES,
        400: {"model": ErrorDetail, "description": "A bad time range, sort key or order."},
    },
)
NOT_FOUND: dict[int | str, dict[str, object]] = {
    404: {"model": ErrorDetail, "description": "No query with this query_id."}
}

FromParam = Annotated[
    str | None,
    Query(
        alias="from",
        description="Start: ISO 8601 or relative to now (now-24h, now-7d); default 24 h ago.",
    ),
]
ToParam = Annotated[str | None, Query(description="End: ISO 8601 or relative; default now.")]
InstanceParam = Annotated[
    list[str] | None, Query(description="Instance names (repeat for several); default all.")
]
SchemaParam = Annotated[str | None, Query(description="Only this schema (database).")]
UserParam = Annotated[str | None, Query(description="Only this user.")]
HostParam = Annotated[str | None, Query(description="Only this client host.")]
TagParam = Annotated[
    list[str] | None,
    Query(
        description="Only statements with this tag, KEY:VALUE (team:payments); repeat for "
        "several: values of one key are alternatives, different keys must all match."
    ),
]
LabelParam = Annotated[
    list[str] | None,
    Query(
        description="Only instances with this label, KEY:VALUE (environment:prod); repeat as tag."
    ),
]
IncludeOwnParam = Annotated[
    bool,
    Query(
        description="Include Quanta's own statements (its EXPLAINs, privilege and schema "
        "probes, performance_schema polls), left out by default."
    ),
]


def _window(settings: SettingsDep, from_: FromParam = None, to: ToParam = None) -> TimeWindow:
    return resolve_window(start=from_, end=to, default_hours=settings.default_range_hours)


def _filter(
    instance: InstanceParam = None,
    schema: SchemaParam = None,
    user: UserParam = None,
    host: HostParam = None,
    tag: TagParam = None,
    label: LabelParam = None,
    include_own: IncludeOwnParam = False,
) -> BucketFilter:
    return BucketFilter(
        instances=tuple(instance or ()),
        schema=schema,
        user=user,
        host=host,
        include_own=include_own,
        tags=parse_pairs(tag, "tag"),
        labels=parse_pairs(label, "label"),
    )


WindowDep = Annotated[TimeWindow, Depends(_window)]
FilterDep = Annotated[BucketFilter, Depends(_filter)]


@router.get("/queries", operation_id="list_queries")
def list_queries(
    session: SessionDep,
    settings: SettingsDep,
    _principal: ReadPrincipal,
    window: WindowDep,
    flt: FilterDep,
    search: Annotated[
        str | None, Query(description="Text in the fingerprint, a table name, or a query_id.")
    ] = None,
    # Closed vocabularies: the schema lists them (the UI's client types them), while the
    # parameter stays a string so an unknown value gets the service's 400 naming the choices.
    sort: Annotated[
        str,
        Query(
            description=f"Metric to sort by: {', '.join(service.SORT_KEYS)}.",
            json_schema_extra={"enum": list(service.SORT_KEYS)},
        ),
    ] = "load",
    order: Annotated[
        str, Query(description="asc or desc.", json_schema_extra={"enum": list(service.ORDERS)})
    ] = "desc",
    limit: Annotated[int, Query(ge=1, le=MAX_ROWS_PER_PAGE)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
    group_by: Annotated[
        str,
        Query(
            description=f"One row per: {', '.join(groups.GROUP_BY)}, a tag key's value "
            "(tag:KEY) or an instance label's (label:KEY).",
            json_schema_extra={"examples": [*groups.GROUP_BY, "tag:team", "label:environment"]},
        ),
    ] = "query",
) -> TopQueries:
    """The top queries of a time range by any metric, with totals, shares and sparklines;
    or, grouped by schema, user, host, instance, tag or label key, the heaviest values of
    that dimension."""
    if group_by != "query":
        return groups.top_groups(
            session=session,
            settings=settings,
            window=window,
            group_by=group_by,
            limit=limit,
            offset=offset,
            sparkline_points=settings.sparkline_points,
            flt=dataclasses.replace(flt, search=search),
            sort=sort,
            order=order,
        )
    return service.top_queries(
        session=session,
        settings=settings,
        window=window,
        limit=limit,
        offset=offset,
        sparkline_points=settings.sparkline_points,
        flt=dataclasses.replace(flt, search=search),
        sort=sort,
        order=order,
    )


@router.get("/queries/{query_id}", operation_id="get_query", responses=NOT_FOUND)
def get_query(
    query_id: str,
    session: SessionDep,
    settings: SettingsDep,
    _principal: ReadPrincipal,
    window: WindowDep,
    flt: FilterDep,
) -> QueryDetail:
    """One query: every metric, latency percentiles, time series and breakdowns."""
    return service.query_detail(
        session=session, settings=settings, window=window, query_id=query_id, flt=flt
    )


@router.get("/queries/{query_id}/examples", operation_id="list_query_examples", responses=NOT_FOUND)
def list_query_examples(
    query_id: str,
    session: SessionDep,
    settings: SettingsDep,
    _principal: ReadPrincipal,
    window: WindowDep,
    instance: InstanceParam = None,
    limit: Annotated[int, Query(ge=1, le=MAX_EXAMPLES)] = DEFAULT_EXAMPLES,
) -> QueryExamples:
    """Real statements of a query in the range, slowest first."""
    return service.query_examples(
        session=session,
        settings=settings,
        window=window,
        query_id=query_id,
        instances=tuple(instance or ()),
        limit=limit,
    )


@router.get("/filters", operation_id="list_filters")
def list_filters(
    session: SessionDep,
    settings: SettingsDep,
    _principal: ReadPrincipal,
    window: WindowDep,
    flt: FilterDep,
) -> Filters:
    """The values of instance, schema, user, host, and of each tag and instance label key
    in the range, with their load share."""
    return service.filter_values(session=session, settings=settings, window=window, flt=flt)


@router.get("/class-caps", operation_id="list_class_caps")
def list_class_caps(
    session: SessionDep, settings: SettingsDep, _principal: ReadPrincipal
) -> list[ClassCap]:
    """Each instance against the query-class caps (QUANTA_MAX_CLASSES_PER_INSTANCE,
    QUANTA_MAX_NEW_CLASSES_PER_HOUR): classes stored, added this hour, and the new statement
    shapes counted under "other queries" over the last 24 hours."""
    return classes.class_caps(session=session, settings=settings)
