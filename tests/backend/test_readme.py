"""What the README tells a new user, where they look for it."""

import re

from quanta.core.config import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    """The text of one ``## `` section, whitespace collapsed."""
    found = re.search(rf"^## {re.escape(title)}\n(.*?)^## ", README, re.S | re.M)
    assert found is not None, f"no section '{title}'"
    return " ".join(found[1].split())


def test_the_chat_section_says_how_to_allow_a_private_webhook() -> None:
    text = section("Index suggestions in chat")
    # The refusal a user meets (notify/targets.py) names the setting; so does the README.
    assert "loopback, link-local or private address" in text
    assert "`QUANTA_ALLOW_PRIVATE_WEBHOOKS=true`" in text
