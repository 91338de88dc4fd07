"""`quanta user ...` and `quanta token ...`: manage credentials on the server's own store."""

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:  # SQLAlchemy is imported when a command runs: every `quanta` start pays less
    from collections.abc import Callable

    from sqlalchemy.orm import Session

    from quanta.auth.service import UserChange

user_app = typer.Typer(help="UI users who sign in with a password.", no_args_is_help=True)
token_app = typer.Typer(help="API tokens for agents, scripts and CI.", no_args_is_help=True)

CLI_ACTOR = "cli"


@contextmanager
def _store() -> Iterator["Session"]:
    """One committed unit of work on the configured store."""
    from quanta.core.config import get_settings
    from quanta.core.db import create_db_engine, create_session_factory, session_scope

    engine = create_db_engine(get_settings())
    try:
        with session_scope(create_session_factory(engine)) as session:
            yield session
    finally:
        engine.dispose()


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(1)


@user_app.command("create")
def create_user(
    name: Annotated[str, typer.Argument(help="The name to sign in with.")],
    role: Annotated[
        str, typer.Option(help="viewer (reads), operator (also requests diagnostics) or admin.")
    ] = "viewer",
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read the password from stdin's first line.")
    ] = False,
) -> None:
    """Create a UI user; asks for the password unless --password-stdin."""
    from quanta.audit.service import record
    from quanta.auth.service import AuthError
    from quanta.auth.service import create_user as create
    from quanta.core.config import get_settings

    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    try:
        with _store() as session:
            user = create(
                session=session,
                name=name,
                password=password,
                role=role,
                min_password_length=get_settings().password_min_length,
            )
            record(
                session=session,
                actor=CLI_ACTOR,
                action="quanta user create",
                detail={"user_id": user.id, "name": user.name, "role": user.role},
            )
            typer.echo(f"Created {user.role} '{user.name}' (id {user.id}).")
    except AuthError as exc:
        raise _fail(str(exc)) from None


def _change_user(
    name: str, action: str, change: "Callable[[Session, int], UserChange]"
) -> "UserChange":
    """Find the user by name, apply `change`, audit it as `quanta user ACTION`; exit 1 with
    the reason (unknown user, last admin, bad role or password) on refusal."""
    from quanta.audit.service import record
    from quanta.auth.service import AuthError, user_named

    try:
        with _store() as session:
            user = user_named(session=session, name=name)
            result = change(session, user.id)
            record(
                session=session,
                actor=CLI_ACTOR,
                action=f"quanta user {action}",
                target={"user_id": str(user.id)},
                detail=result.detail,
            )
    except AuthError as exc:
        raise _fail(str(exc)) from None
    return result


@user_app.command("list")
def list_users() -> None:
    """List users: name, role, state (active or disabled), live sessions, last sign-in."""
    from quanta.auth.service import list_users_with_sessions

    with _store() as session:
        for item in list_users_with_sessions(session=session):
            user = item.user
            state = f"disabled {user.disabled_at:%Y-%m-%d %H:%M}" if user.disabled_at else "active"
            seen = f"{user.last_login_at:%Y-%m-%d %H:%M}" if user.last_login_at else "never"
            typer.echo(
                f"{user.id}\t{user.name}\t{user.role}\t{state}\t"
                f"{item.live_sessions} session(s)\tlast sign-in {seen}"
            )


@user_app.command("set-role")
def set_role(
    name: Annotated[str, typer.Argument(help="The user.")],
    role: Annotated[str, typer.Argument(help="The new role (viewer, operator or admin).")],
) -> None:
    """Give a user another role; it applies to their open sessions at once."""
    from quanta.auth import service

    result = _change_user(
        name, "set-role", lambda s, uid: service.set_role(session=s, user_id=uid, role=role)
    )
    typer.echo(f"'{result.user.name}' is now {role} (was {result.old_role}).")


@user_app.command("disable")
def disable_user(name: Annotated[str, typer.Argument(help="The user.")]) -> None:
    """Disable a user: no sign-in, and their sessions end at once."""
    from quanta.auth import service

    result = _change_user(
        name,
        "disable",
        lambda s, uid: service.set_disabled(session=s, user_id=uid, disabled=True),
    )
    typer.echo(f"Disabled '{result.user.name}'; {result.sessions_ended} session(s) ended.")


@user_app.command("enable")
def enable_user(name: Annotated[str, typer.Argument(help="The user.")]) -> None:
    """Enable a disabled user again (they sign in anew)."""
    from quanta.auth import service

    result = _change_user(
        name,
        "enable",
        lambda s, uid: service.set_disabled(session=s, user_id=uid, disabled=False),
    )
    typer.echo(f"Enabled '{result.user.name}'.")


@user_app.command("reset-password")
def reset_password(
    name: Annotated[str, typer.Argument(help="The user.")],
    password_stdin: Annotated[
        bool,
        typer.Option("--password-stdin", help="Read the new password from stdin's first line."),
    ] = False,
) -> None:
    """Set a new password (else print a generated one, once) and end the user's sessions."""
    from quanta.auth import service
    from quanta.core.config import get_settings

    password = sys.stdin.readline().rstrip("\r\n") if password_stdin else None
    minimum = get_settings().password_min_length
    result = _change_user(
        name,
        "reset-password",
        lambda s, uid: service.reset_password(
            session=s, user_id=uid, password=password, min_password_length=minimum
        ),
    )
    typer.echo(
        f"Password of '{result.user.name}' reset; {result.sessions_ended} session(s) ended.",
        err=result.generated_password is not None,
    )
    if result.generated_password is not None:
        typer.echo(result.generated_password)  # alone on stdout, for a script to pick up


@user_app.command("logout")
def logout_user(name: Annotated[str, typer.Argument(help="The user.")]) -> None:
    """End every session of a user (they must sign in again)."""
    from quanta.auth import service

    result = _change_user(
        name, "logout", lambda s, uid: service.end_sessions(session=s, user_id=uid)
    )
    typer.echo(f"Ended {result.sessions_ended} session(s) of '{result.user.name}'.")


@user_app.command("delete")
def delete_user(name: Annotated[str, typer.Argument(help="The user.")]) -> None:
    """Delete a user; their sessions end at once (their annotations stay)."""
    from quanta.auth import service

    result = _change_user(
        name, "delete", lambda s, uid: service.delete_user(session=s, user_id=uid)
    )
    typer.echo(f"Deleted '{result.detail['name']}'; {result.sessions_ended} session(s) ended.")


@token_app.command("create")
def create_token(
    name: Annotated[str, typer.Option("--name", help="What the token is for, e.g. agent-db1.")],
    scope: Annotated[
        list[str], typer.Option("--scope", help="ingest, annotate, read or admin (repeatable).")
    ],
    instance: Annotated[
        list[str] | None,
        typer.Option("--instance", help="An instance an ingest token may feed (repeatable)."),
    ] = None,
) -> None:
    """Create an API token and print it once: it cannot be shown again."""
    from quanta.audit.service import record
    from quanta.auth.service import AuthError
    from quanta.auth.service import create_token as create

    try:
        with _store() as session:
            new = create(session=session, name=name, scopes=scope, instances=instance or None)
            record(
                session=session,
                actor=CLI_ACTOR,
                action="quanta token create",
                target={"token_id": str(new.row.id)},
                detail={"name": name, "scopes": new.row.scopes, "instances": new.row.instances},
            )
            token_id = new.row.id
    except AuthError as exc:
        raise _fail(str(exc)) from None
    typer.echo(f"Token {token_id} created; it is shown only now:", err=True)
    typer.echo(new.secret)


@token_app.command("revoke")
def revoke_token(
    token_id: Annotated[int, typer.Argument(help="The id `token list` shows.")],
) -> None:
    """Revoke an API token: it stops working at once."""
    from quanta.audit.service import record
    from quanta.auth.service import AuthError
    from quanta.auth.service import revoke_token as revoke

    try:
        with _store() as session:
            row = revoke(session=session, token_id=token_id)
            record(
                session=session,
                actor=CLI_ACTOR,
                action="quanta token revoke",
                target={"token_id": str(token_id)},
                detail={"name": row.name},
            )
    except AuthError as exc:
        raise _fail(str(exc)) from None
    typer.echo(f"Revoked token {token_id} ('{row.name}').")


@token_app.command("list")
def list_tokens() -> None:
    """List API tokens (never their secrets) with scopes, instances and last use."""
    from quanta.auth.service import list_tokens as list_all

    with _store() as session:
        for row in list_all(session=session):
            state = f"revoked {row.revoked_at:%Y-%m-%d %H:%M}" if row.revoked_at else "active"
            used = f"{row.last_used_at:%Y-%m-%d %H:%M}" if row.last_used_at else "never"
            bound = ",".join(row.instances or []) or "-"
            typer.echo(
                f"{row.id}\t{row.name}\t{','.join(row.scopes)}\t{bound}\tused {used}\t{state}"
            )
