"""SQL statements of the annotations domain: annotations, their tags and instances (the
figures their impact compares are the queries domain's, read through its service)."""

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, or_, select
from sqlalchemy.orm import Session

from quanta.annotations.models import Annotation, AnnotationInstance, AnnotationTag
from quanta.instances.models import Instance


@dataclass(frozen=True, slots=True)
class AnnotationRow:
    """An annotation with its tags and instance names."""

    annotation: Annotation
    tags: list[str]
    instances: list[str]


def add_annotation(
    session: Session, annotation: Annotation, tags: Sequence[str], instance_ids: Sequence[int]
) -> None:
    """Insert an annotation with its tags and instances (flushed, not committed)."""
    session.add(annotation)
    session.flush()
    session.add_all(AnnotationTag(annotation_id=annotation.id, tag=tag) for tag in tags)
    session.add_all(
        AnnotationInstance(annotation_id=annotation.id, instance_id=i) for i in instance_ids
    )
    session.flush()


def get_annotation(session: Session, annotation_id: int) -> AnnotationRow | None:
    """One annotation with its tags and instances, or None."""
    annotation = session.get(Annotation, annotation_id)
    if annotation is None:
        return None
    return next(_with_details(session, [annotation]))


def list_annotations(
    session: Session,
    *,
    start: datetime,
    end: datetime,
    instance: str | None,
    tags: Sequence[str],
) -> list[AnnotationRow]:
    """Annotations overlapping [start, end), oldest first, optionally filtered.

    ``instance``: only those about this instance or about all instances. ``tags``: only
    those carrying at least one of them.
    """
    stmt = select(Annotation).where(
        Annotation.time < end, func.coalesce(Annotation.end_time, Annotation.time) >= start
    )
    if instance is not None:
        mine = (
            select(AnnotationInstance.annotation_id)
            .join(Instance, Instance.id == AnnotationInstance.instance_id)
            .where(Instance.name == instance)
        )
        any_instance = select(AnnotationInstance.annotation_id)
        stmt = stmt.where(or_(Annotation.id.in_(mine), Annotation.id.not_in(any_instance)))
    if tags:
        tagged = select(AnnotationTag.annotation_id).where(AnnotationTag.tag.in_(tags))
        stmt = stmt.where(Annotation.id.in_(tagged))
    stmt = stmt.order_by(Annotation.time, Annotation.id)
    return list(_with_details(session, list(session.scalars(stmt))))


def _with_details(session: Session, annotations: list[Annotation]) -> Iterator[AnnotationRow]:
    # Two reads for the whole list, not two per annotation.
    ids = [a.id for a in annotations]
    tags: dict[int, list[str]] = defaultdict(list)
    names: dict[int, list[str]] = defaultdict(list)
    if ids:
        for annotation_id, tag in session.execute(
            select(AnnotationTag.annotation_id, AnnotationTag.tag)
            .where(AnnotationTag.annotation_id.in_(ids))
            .order_by(AnnotationTag.tag)
        ):
            tags[annotation_id].append(tag)
        for annotation_id, name in session.execute(
            select(AnnotationInstance.annotation_id, Instance.name)
            .join(Instance, Instance.id == AnnotationInstance.instance_id)
            .where(AnnotationInstance.annotation_id.in_(ids))
            .order_by(Instance.name)
        ):
            names[annotation_id].append(name)
    for a in annotations:
        yield AnnotationRow(a, tags[a.id], names[a.id])


def annotation_instance_ids(session: Session, annotation_id: int) -> list[int]:
    """The ids of the instances an annotation names (empty: all)."""
    stmt = select(AnnotationInstance.instance_id).where(
        AnnotationInstance.annotation_id == annotation_id
    )
    return list(session.scalars(stmt))


def delete_annotation(session: Session, annotation_id: int) -> None:
    """Delete an annotation and its tags and instances (children first: SQLite may not
    enforce ON DELETE CASCADE)."""
    session.execute(delete(AnnotationTag).where(AnnotationTag.annotation_id == annotation_id))
    session.execute(
        delete(AnnotationInstance).where(AnnotationInstance.annotation_id == annotation_id)
    )
    session.execute(delete(Annotation).where(Annotation.id == annotation_id))
