"""Grouping rules: user-defined patterns that merge identifiers into one query class.

Shops that shard tables (``orders_17``, ``orders_18``, ...) or create one table per day want
one query class for all of them. A rule is a regular expression matched against each whole
identifier of a fingerprint (a table, column or schema name, lower case) and the identifier
it becomes, written ``PATTERN=REPLACEMENT`` on the command line and in settings::

    orders_[0-9]+=orders_N
    (shop|crm)_v[0-9]+=\\1_vN

A rule sees one name at a time (``db.orders_17`` is two names), a quoted one without its
backticks (``shard-[0-9]+=shard_N`` matches the fingerprint's ```shard-17```). Keywords are
names too as far as a rule is concerned, so a rule should be specific enough not to match
one. Replacements may use ``\\1``-style group references.

Example:
    >>> rules = parse_rules(["orders_[0-9]+=orders_N"])
    >>> apply_rules("select * from orders_17 where id=?", rules)
    'select * from orders_N where id=?'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from quanta.analysis.fingerprint import quote_name
from quanta.analysis.sqltext import unquote_ident

__all__ = ["GroupingRule", "apply_rules", "parse_rule", "parse_rules"]

# A name in a fingerprint: one in backticks (a fingerprint keeps the quotes of a name that
# needs them, see quanta.analysis.fingerprint), or a bare one ('?' is never a name).
_NAME_RE = re.compile(r"`(?P<quoted>(?:[^`]|``)*)`|(?<![\w$?])[^\W\d][\w$]*")
_REPLACEMENT_RE = re.compile(r"[\w$\\]+")


@dataclass(frozen=True, slots=True)
class GroupingRule:
    """One rule: identifiers that fully match ``pattern`` are rewritten to ``replacement``."""

    pattern: re.Pattern[str]
    replacement: str

    def rewrite(self, name: str) -> str | None:
        """Return the new name if the rule applies to ``name``, else None."""
        match = self.pattern.fullmatch(name)
        return None if match is None else match.expand(self.replacement)


def parse_rule(text: str) -> GroupingRule:
    """Parse ``PATTERN=REPLACEMENT``.

    Raises:
        ValueError: With a message a person can act on, when the text is not a valid rule.

    Example:
        >>> parse_rule("users_[0-9]{4}=users_YYYY").rewrite("users_2009")
        'users_YYYY'
    """
    pattern, sep, replacement = text.rpartition("=")
    if not sep or not pattern:
        raise ValueError(f"grouping rule {text!r} must look like PATTERN=REPLACEMENT")
    if not _REPLACEMENT_RE.fullmatch(replacement):
        raise ValueError(
            f"grouping rule {text!r}: the replacement {replacement!r} must be a name "
            "(letters, digits, _ and $, optionally \\1-style group references)"
        )
    try:
        compiled = re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise ValueError(f"grouping rule {text!r}: invalid pattern: {exc}") from None
    try:
        compiled.sub(replacement, "")  # checks the replacement's group references
    except re.error as exc:
        raise ValueError(f"grouping rule {text!r}: invalid replacement: {exc}") from None
    return GroupingRule(compiled, replacement)


def parse_rules(texts: Iterable[str]) -> tuple[GroupingRule, ...]:
    """Parse several ``PATTERN=REPLACEMENT`` rules (see :func:`parse_rule`)."""
    return tuple(parse_rule(text) for text in texts)


def apply_rules(fingerprint: str, rules: Sequence[GroupingRule]) -> str:
    """Rewrite every name in a fingerprint with the first rule that matches it.

    Example:
        >>> apply_rules("select a from t_1 join t_2", parse_rules([r"t_\\d+=t_N"]))
        'select a from t_N join t_N'
    """
    if not rules:
        return fingerprint

    def rewrite(match: re.Match[str]) -> str:
        quoted = match["quoted"]
        name = match.group() if quoted is None else unquote_ident(match.group())
        for rule in rules:
            new_name = rule.rewrite(name)
            if new_name is not None:
                return new_name if quoted is None else quote_name(new_name)
        return match.group()

    return _NAME_RE.sub(rewrite, fingerprint)
