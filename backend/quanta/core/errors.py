"""The one error hierarchy: a domain error carries its HTTP status, one handler renders it.

Services raise a subclass of :class:`QuantaError` (usually through one of the kinds below);
routers never catch them. The handler :func:`quanta_error_handler`, registered once by the
app factory, answers ``{"detail": message}`` with the class's status, the same body FastAPI
gives an ``HTTPException``, so clients (and the generated UI client) read one shape.

>>> class NoSuchThing(NotFound):
...     '''No thing with that id.'''
>>> error = NoSuchThing("No thing with id 7.")
>>> (error.status_code, error.message, isinstance(error, LookupError))
(404, 'No thing with id 7.', True)
"""

from fastapi import Request, status
from starlette.responses import JSONResponse


class QuantaError(Exception):
    """A request that cannot be honoured; the message says why and is shown to the caller.

    Subclasses set ``status_code``; an instance may override it for one raise.
    """

    status_code: int = status.HTTP_400_BAD_REQUEST

    def __init__(self, message: str = "", *, status_code: int | None = None) -> None:
        super().__init__(message)
        if status_code is not None:
            self.status_code = status_code

    @property
    def message(self) -> str:
        """What the caller is told (the exception's text)."""
        return str(self)


class InvalidRequest(QuantaError, ValueError):
    """A value in the request that cannot be accepted (400)."""

    status_code = status.HTTP_400_BAD_REQUEST


class Forbidden(QuantaError, PermissionError):
    """The caller may not do this (403)."""

    status_code = status.HTTP_403_FORBIDDEN


class NotFound(QuantaError, LookupError):
    """The thing asked for does not exist (404)."""

    status_code = status.HTTP_404_NOT_FOUND


class Conflict(QuantaError):
    """The request conflicts with the stored state; the message says how to resolve it (409)."""

    status_code = status.HTTP_409_CONFLICT


class PayloadTooLarge(QuantaError):
    """The request carries more than allowed (413)."""

    status_code = status.HTTP_413_CONTENT_TOO_LARGE


class Unprocessable(QuantaError):
    """Well-formed but unusable content (422)."""

    status_code = status.HTTP_422_UNPROCESSABLE_CONTENT


class Unavailable(QuantaError):
    """A service this request needs does not answer now; retrying later may work (503)."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE


async def quanta_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    """Render a domain error as ``{"detail": message}`` with its status (as HTTPException)."""
    assert isinstance(exc, QuantaError)
    return JSONResponse({"detail": exc.message}, status_code=exc.status_code)
