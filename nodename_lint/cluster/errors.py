"""What can go wrong reading a live cluster, and the one-line messages that say so.

Errors are told apart by the types raised (socket, ssl and urllib3 errors in the exception chain),
never by their text. Every message quotes at most the server's own text, kept on one line.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from ..safe_text import one_line
from ..sources import UsageError

RBAC_EXAMPLE = "examples/rbac/nodename-lint-readonly.yaml"


class ClusterUnavailable(UsageError):
    """The cluster cannot be read in a way the run could trust (exit code 2).

    Its message quotes the server's replies, so it is kept on one line (safe_text.one_line).
    """

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))


class Forbidden(Exception):
    """A 403 for one verb on one resource: the run continues without that data."""

    def __init__(self, verb: str, resource: str, message: str) -> None:
        super().__init__(message)
        self.verb, self.resource, self.message = verb, resource, one_line(message)

    def reason(self) -> str:
        return (
            f"the API server refused to {self.verb} {self.resource} ({self.message}); "
            f"grant {self.verb} on {self.resource} (see {RBAC_EXAMPLE})"
        )


class Gone(Exception):
    """410 Gone: the continue token or the watch's resourceVersion expired."""


class NotFound(ClusterUnavailable):
    """404 for one object: it does not exist (a caller that asked for it may say so)."""


class ReplyTooLarge(Exception):
    """The reply went past --max-response-bytes."""


# --- small helpers --------------------------------------------------------------------------------
def hostname_mismatch_errors() -> tuple[type[BaseException], ...]:
    """urllib3 1.x checks host names itself and raises its own CertificateError; 2.x leaves it to ssl."""
    try:
        from urllib3.util.ssl_match_hostname import CertificateError
    except ImportError:
        return ()
    return (CertificateError,)


def exception_chain(exc: BaseException) -> list[BaseException]:
    chain, seen = [], set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        current = (
            getattr(current, "reason", None)
            if isinstance(getattr(current, "reason", None), BaseException)
            else (current.__cause__ or current.__context__)
        )
    return chain


def one_line_of(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def status_message(body: bytes) -> str:
    try:
        data = json.loads(body)
    except ValueError:
        return ""
    return str(data.get("message", "")) if isinstance(data, dict) else ""


def network_error(exc: BaseException, what: str, server: str, source: str, timeout: float) -> str:
    """One line that says what went wrong on the way to the server, from the types of the errors raised.

    urllib3 wraps the socket and ssl errors; the chain (cause, context, `reason`) holds them all.
    """
    import http.client
    import socket
    import ssl

    import urllib3.exceptions as u3

    host = urlsplit(server).hostname or server
    text = one_line_of(exc)
    chain = exception_chain(exc)

    def raised(*types: type[BaseException]) -> BaseException | None:
        return next((error for error in chain if isinstance(error, types)), None)

    if raised(socket.gaierror):
        return (
            f"cannot resolve the API server name {host!r} of {source} ({server}): check the server "
            "in the kubeconfig or your DNS"
        )
    verify = raised(ssl.SSLCertVerificationError, *hostname_mismatch_errors())
    if verify is not None:
        detail = getattr(verify, "verify_message", None) or one_line_of(verify)
        return (
            f"TLS verification of the API server {server} failed ({detail}): its certificate does not match "
            f"the certificate-authority or the server address of {source}; fix them in the kubeconfig"
        )
    if raised(ssl.SSLError, u3.SSLError):
        return f"the TLS handshake with the API server {server} of {source} failed: {text}"
    if raised(ConnectionRefusedError):
        return f"cannot connect to the API server {server} of {source}: connection refused; is the cluster running?"
    timed_out = raised(u3.ConnectTimeoutError, u3.ReadTimeoutError, TimeoutError)
    if isinstance(timed_out, u3.ConnectTimeoutError) and not isinstance(timed_out, u3.NewConnectionError):
        return (
            f"the API server {server} of {source} did not accept a connection within {timeout:g}s (--request-timeout)"
        )
    if timed_out is not None:
        return (
            f"the API server {server} did not answer {what} within {timeout:g}s (--request-timeout); "
            "the cluster state cannot be read"
        )
    if raised(u3.NewConnectionError):
        return f"cannot connect to the API server {server} of {source}: {text}"
    if raised(u3.ProtocolError, u3.IncompleteRead, http.client.HTTPException, ConnectionError):
        return f"the API server {server} broke off its reply to {what} ({text}); the cluster state cannot be trusted"
    return f"cannot read {what} from the API server {server}: {text}"
