"""Apply Alembic migrations programmatically (`quanta migrate`, app start, tests)."""

from alembic import command
from alembic.config import Config

from quanta.core.config import REPO_ROOT, Settings
from quanta.core.db import create_db_engine


def alembic_config(settings: Settings) -> Config:
    """An Alembic config for the repository's migrations/ and the configured store."""
    config = Config(str(REPO_ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(REPO_ROOT / "migrations"))
    config.set_main_option("sqlalchemy.url", settings.database_url_resolved)
    return config


def upgrade_to_head(settings: Settings) -> None:
    """Bring the store's schema to the newest revision."""
    config = alembic_config(settings)
    engine = create_db_engine(settings)
    try:
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
    finally:
        engine.dispose()
