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

__all__ = ["GAP", "SECRET_NAMES", "SecretNames", "is_secret_name", "name_parts", "trie_pattern"]

_PART_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_NOT_LETTERS_RE = re.compile(r"[^a-z]+")


@dataclass(frozen=True, slots=True)
class SecretNames:
    """The parsed list: each section of ``secret_names.ini`` as a set or tuple."""

    words: frozenset[str]
    compounds: tuple[tuple[str, ...], ...]
    stems: tuple[str, ...]
    metadata: frozenset[str]
    exceptions: frozenset[str]
    # Every entry's letters: a name naming a secret holds one of them once its non-letters
    # are dropped (the cheap test that most names fail).
    letters_re: re.Pattern[str]
    compounds_by_first: dict[str, list[tuple[str, ...]]]

    @property
    def trigger_words_with_gaps(self) -> list[str]:
        """What every text naming a secret holds once lower-cased, for
        :func:`trie_pattern`: the words and stems, and each compound's parts with
        :data:`GAP` between them (``apikey``, ``api_key``, ``api2-key`` all match)."""
        return sorted({*self.words, *self.stems, *(GAP.join(c) for c in self.compounds)})

    @property
    def trigger_words(self) -> tuple[str, ...]:
        """Lower-case substrings that texts naming a secret hold (for SQL ``LIKE`` filters):
        compounds in the usual spellings, ``api_key``, ``apikey``, ``api-key``, ``api.key``;
        an entry holding another (``password`` holds ``pass``) is left out, as the shorter
        one finds it. :attr:`trigger_words_with_gaps` finds every spelling."""
        spelled = {
            joiner.join(compound) for compound in self.compounds for joiner in ("", "_", "-", ".")
        }
        every = self.words | set(self.stems) | spelled
        return tuple(sorted(w for w in every if not any(o != w and o in w for o in every)))


# In trie_pattern's words: any run of non-letters (between a compound's parts).
GAP = "\0"


def trie_pattern(words: list[str]) -> str:
    """A regular expression finding any of ``words``, branching per letter (a trie: one
    branch tried per position instead of every word). A word that another one starts with
    ends the branch, as finding it is enough for a substring test; :data:`GAP` in a word
    stands for any run of non-letters.

    Example:
        >>> trie_pattern(["pass", "password", "pin", "token", f"api{GAP}key"])
        '(?:api[^a-z]*key|p(?:ass|in)|token)'
    """
    branches: dict[str, list[str]] = {}
    for word in words:
        branches.setdefault(word[0], []).append(word[1:])
    alternatives = [
        _atom(first) + ("" if "" in tails else trie_pattern(tails))
        for first, tails in sorted(branches.items())
    ]
    return alternatives[0] if len(alternatives) == 1 else f"(?:{'|'.join(alternatives)})"


def _atom(char: str) -> str:
    return "[^a-z]*" if char == GAP else re.escape(char)


def _load() -> SecretNames:
    parser = configparser.ConfigParser(allow_no_value=True, delimiters=("=",))
    text = resources.files(__package__).joinpath("secret_names.ini").read_text("utf-8")
    parser.read_string(text)
    words, stems = frozenset(parser["words"]), tuple(parser["stems"])
    compounds = tuple(tuple(entry.split("_")) for entry in parser["compounds"])
    letters = sorted({*words, *stems, *("".join(compound) for compound in compounds)})
    return SecretNames(
        words=words,
        compounds=compounds,
        stems=stems,
        metadata=frozenset(parser["metadata"]),
        exceptions=frozenset("_".join(name_parts(entry)) for entry in parser["exceptions"]),
        letters_re=re.compile("|".join(map(re.escape, letters))),
        compounds_by_first=_by_first(compounds),
    )


def _by_first(compounds: tuple[tuple[str, ...], ...]) -> dict[str, list[tuple[str, ...]]]:
    found: dict[str, list[tuple[str, ...]]] = {}
    for compound in compounds:
        found.setdefault(compound[0], []).append(compound)
    return found


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
    if not names.letters_re.search(_NOT_LETTERS_RE.sub("", name.lower())):
        return False  # most names and strings: no entry's letters in it at all
    parts = name_parts(name)
    words = [part for part in parts if not part.isdigit()]
    if not words or (len(words) > 1 and words[-1] in names.metadata):
        return False
    if "_".join(parts) in names.exceptions:
        return False
    for index, part in enumerate(words):
        if part in names.words or (part[-1:] == "s" and part[:-1] in names.words):
            return True
        for stem in names.stems:
            if stem in part:
                return True
        for compound in names.compounds_by_first.get(part, ()):
            if _spells(words, index, compound):
                return True
    return False


def _spells(words: list[str], index: int, compound: tuple[str, ...]) -> bool:
    """Whether ``words[index:]`` starts with ``compound`` (its last part may be plural)."""
    end = index + len(compound)
    if end > len(words) or words[index : end - 1] != list(compound[:-1]):
        return False
    last = words[end - 1]
    return last == compound[-1] or last == compound[-1] + "s"
