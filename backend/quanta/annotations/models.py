"""Annotations and the tags and instances they name."""

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from quanta.core.db import Base, UTCDateTime, utcnow

TEXT_MAX_CHARS = 1000
TAG_MAX_CHARS = 100
CREATOR_MAX_CHARS = 100


class Annotation(Base):
    """A point in time (``end_time`` NULL) or a range on every chart, with a text.

    ``created_by`` copies the token's name so the annotation still says who made it after the
    token is revoked. ``created_by_token_id`` and, for a signed-in user (whose session token
    changes at every sign-in), ``created_by_user_id`` decide who may delete it.
    """

    __tablename__ = "annotations"
    __table_args__ = (Index("ix_annotations_time", "time"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    text: Mapped[str] = mapped_column(String(TEXT_MAX_CHARS))
    time: Mapped[datetime] = mapped_column(UTCDateTime)
    end_time: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    created_by: Mapped[str] = mapped_column(String(CREATOR_MAX_CHARS))
    created_by_token_id: Mapped[int | None] = mapped_column(
        ForeignKey("api_tokens.id", ondelete="SET NULL"), default=None
    )
    # No foreign key: users belong to the auth domain's own migration, which this one does not
    # depend on; a deleted user's id simply matches no one.
    created_by_user_id: Mapped[int | None] = mapped_column(Integer, default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class AnnotationTag(Base):
    """One tag of an annotation (a row each, so a tag filter is an indexed lookup)."""

    __tablename__ = "annotation_tags"
    __table_args__ = (Index("ix_annotation_tags_tag", "tag"),)

    annotation_id: Mapped[int] = mapped_column(
        ForeignKey("annotations.id", ondelete="CASCADE"), primary_key=True
    )
    tag: Mapped[str] = mapped_column(String(TAG_MAX_CHARS), primary_key=True)


class AnnotationInstance(Base):
    """An instance an annotation is about; an annotation without any is about all of them."""

    __tablename__ = "annotation_instances"
    __table_args__ = (Index("ix_annotation_instances_instance_id", "instance_id"),)

    annotation_id: Mapped[int] = mapped_column(
        ForeignKey("annotations.id", ondelete="CASCADE"), primary_key=True
    )
    instance_id: Mapped[int] = mapped_column(
        ForeignKey("instances.id", ondelete="CASCADE"), primary_key=True
    )
