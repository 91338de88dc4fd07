"""Which names hold a secret, by their word parts: the rules of ``secret_names.ini``.

The list is data (``secret_names.ini`` beside this module, shipped with the agent): this
module only reads it, once, and matches names against it. A name is split into word parts
(:func:`name_parts`): at every character that is not a letter or a digit, between letters
and digits, and where lower case turns to upper case. It holds a secret when one of its
parts is a listed word (or its plural), when consecutive parts spell a listed compound,
or when a part contains a listed stem; unless its last part says it only describes a
secret (``password_changed_at``, ``api_key_id``) or it is a listed exception (a plugin's
name). Matching whole parts is what keeps ``pinned``, ``author``, ``spin`` and
``tokenizer`` out while ``pin_code``, ``authToken`` and ``X-API-KEY`` are in.

Example:
    >>> [is_secret_name(n) for n in ("smtp_password", "apiKey", "pin", "pinned", "author")]
    [True, True, True, False, False]
    >>> is_secret_name("password_changed_at"), is_secret_name("access_tokens")
    (False, True)
"""

from __future__ import annotations

import configparser
import re
from dataclasses import dataclass
from importlib import resources

__all__ = ["SECRET_NAMES", "SecretNames", "is_secret_name", "name_parts"]

_PART_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


@dataclass(frozen=True, slots=True)
class SecretNames:
    """The parsed list: each section of ``secret_names.ini`` as a set or tuple."""

    words: frozenset[str]
    compounds: tuple[tuple[str, ...], ...]
    stems: tuple[str, ...]
    metadata: frozenset[str]
    exceptions: frozenset[str]

    @property
    def trigger_words(self) -> tuple[str, ...]:
        """Lower-case substrings one of which any text naming a secret holds (a pre-check:
        a text without any of them names none). Compounds in every spelling the parts
        allow: ``api_key``, ``apikey``, ``api-key``; an entry holding another (``password``
        holds ``pass``) is left out, as the shorter one finds it."""
        spelled = {
            joiner.join(compound) for compound in self.compounds for joiner in ("", "_", "-")
        }
        every = self.words | set(self.stems) | spelled
        return tuple(sorted(w for w in every if not any(o != w and o in w for o in every)))


def _load() -> SecretNames:
    parser = configparser.ConfigParser(allow_no_value=True, delimiters=("=",))
    text = resources.files(__package__).joinpath("secret_names.ini").read_text("utf-8")
    parser.read_string(text)
    return SecretNames(
        words=frozenset(parser["words"]),
        compounds=tuple(tuple(entry.split("_")) for entry in parser["compounds"]),
        stems=tuple(parser["stems"]),
        metadata=frozenset(parser["metadata"]),
        exceptions=frozenset("_".join(name_parts(entry)) for entry in parser["exceptions"]),
    )


def name_parts(name: str) -> list[str]:
    """The word parts of a name, lower case.

    Example:
        >>> name_parts("HTTPAuthToken"), name_parts("MASTER_PASSWORD2"), name_parts("$.smtp.pwd")
        (['http', 'auth', 'token'], ['master', 'password', '2'], ['smtp', 'pwd'])
    """
    return [part.lower() for part in _PART_RE.findall(name)]


SECRET_NAMES = _load()


def is_secret_name(name: str, names: SecretNames = SECRET_NAMES) -> bool:
    """Whether ``name`` (a column, variable, option or key) holds a secret (module docstring).

    Example:
        >>> is_secret_name("user_pwd"), is_secret_name("mypassword"), is_secret_name("auth_type")
        (True, True, False)
    """
    parts = name_parts(name)
    words = [part for part in parts if not part.isdigit()]
    if not words or (len(words) > 1 and words[-1] in names.metadata):
        return False
    if "_".join(parts) in names.exceptions:
        return False
    for index, part in enumerate(words):
        if part in names.words or (part.endswith("s") and part[:-1] in names.words):
            return True
        if any(stem in part for stem in names.stems):
            return True
        if any(_spells(words, index, compound) for compound in names.compounds):
            return True
    return False


def _spells(words: list[str], index: int, compound: tuple[str, ...]) -> bool:
    """Whether ``words[index:]`` starts with ``compound`` (its last part may be plural)."""
    end = index + len(compound)
    if end > len(words) or words[index : end - 1] != list(compound[:-1]):
        return False
    last = words[end - 1]
    return last == compound[-1] or last == compound[-1] + "s"
