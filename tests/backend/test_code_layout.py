"""docs/architecture.md's capability -> module index names every folder of backend/quanta and
every module of analysis/, and nothing that no longer exists."""

import re

from quanta.core.config import REPO_ROOT

PACKAGE = REPO_ROOT / "backend" / "quanta"
ANALYSIS = PACKAGE / "analysis"
ARCHITECTURE = REPO_ROOT / "docs" / "architecture.md"
# Not code: files a package ships (the API docs' scripts).
NOT_CODE = {"apidocs_assets", "__pycache__"}


def code_layout() -> str:
    """The "Code layout" section, index included, up to the next section."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = re.search(r"^## Code layout\n(.*?)^## ", text, re.DOTALL | re.MULTILINE)
    assert section, "docs/architecture.md has no '## Code layout' section"
    return section[1]


def folders() -> set[str]:
    """Every folder of backend/quanta, as `quanta/<path>/`."""
    return {
        f"quanta/{path.relative_to(PACKAGE).as_posix()}/"
        for path in PACKAGE.rglob("*")
        if path.is_dir() and not NOT_CODE & set(path.relative_to(PACKAGE).parts)
    }


def analysis_modules() -> set[str]:
    """Every module directly in analysis/, as `analysis/<name>.py`."""
    return {f"analysis/{p.name}" for p in ANALYSIS.glob("*.py") if p.name != "__init__.py"}


def test_every_folder_and_analysis_module_is_in_the_index() -> None:
    cited = set(re.findall(r"`([^`\s]+)`", code_layout()))
    assert len(folders()) >= 15
    assert len(analysis_modules()) >= 20
    assert sorted(folders() - cited) == []
    assert sorted(analysis_modules() - cited) == []


def test_every_path_the_index_names_exists() -> None:
    cited = set(re.findall(r"`((?:quanta|analysis)/[^`\s]*)`", code_layout()))
    assert cited
    missing = [p for p in cited if not (PACKAGE.parent / p).exists() and not (PACKAGE / p).exists()]
    assert sorted(missing) == []
