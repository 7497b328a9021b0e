"""Requests to webhook endpoints, which the agent's operator names and this service then calls: only to public
addresses (every address the host resolves to is checked, and the connection goes to an address that was checked, so
a name that resolves differently a moment later cannot send it elsewhere), over https unless a setting allows http,
never following a redirect, and within one deadline for the whole exchange.

WEBHOOK_ALLOW_PRIVATE_ADDRESSES lets private, loopback and link-local addresses through (a receiver on the same
machine or network, the tests' local receiver); docs/security.md "Webhooks"."""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import socket
import ssl
import threading
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

# What is kept of an endpoint's answer: its status decides; a little of the body helps an operator read a failure.
RESPONSE_BODY_KEPT = 500


class WebhookUrlRefused(Exception):
    """A URL this service will not call, and why (for the field's error message)."""


class WebhookSendError(Exception):
    """The request could not be made or answered (refused address, connection, TLS, timeout)."""


def _address_refused(address: str) -> str | None:
    """Why an address may not be called, or None."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES and (ip.is_private or ip.is_loopback or ip.is_link_local):
        return None
    for refused, kind in (
        (ip.is_loopback, "a loopback"),
        (ip.is_link_local, "a link-local"),
        (ip.is_unspecified or ip.is_multicast or ip.is_reserved, "a reserved"),
        (ip.is_private, "a private"),
        (not ip.is_global, "a non-public"),
    ):
        if refused:
            return f"{kind} address ({ip})"
    return None


@dataclass(frozen=True)
class CheckedUrl:
    scheme: str
    host: str
    port: int
    target: str  # path and query
    addresses: tuple[str, ...]


def webhook_url_check(url: str) -> CheckedUrl:
    """The URL, resolved, if this service may call it; WebhookUrlRefused saying why not."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise WebhookUrlRefused(f"not a valid URL ({error}).") from error
    allowed_schemes = ("https",) if settings.WEBHOOK_REQUIRE_HTTPS else ("https", "http")
    if parts.scheme not in allowed_schemes:
        raise WebhookUrlRefused(f"the URL must start with {' or '.join(f'{s}://' for s in allowed_schemes)}.")
    if not parts.hostname:
        raise WebhookUrlRefused("the URL has no host.")
    if parts.username is not None or parts.password is not None:
        raise WebhookUrlRefused("the URL must not carry credentials; the signature authenticates the requests.")
    if parts.fragment:
        raise WebhookUrlRefused("the URL must not have a fragment (#...).")
    port = port or (443 if parts.scheme == "https" else 80)
    try:
        found = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise WebhookUrlRefused(f"the host {parts.hostname!r} cannot be resolved.") from error
    addresses = tuple(dict.fromkeys(str(info[4][0]) for info in found))
    for address in addresses:
        if (reason := _address_refused(address)) is not None:
            raise WebhookUrlRefused(f"the host {parts.hostname!r} resolves to {reason}; webhooks go to public hosts.")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return CheckedUrl(scheme=parts.scheme, host=parts.hostname, port=port, target=target, addresses=addresses)


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """An HTTP connection to an address already checked, whatever the host name resolves to now."""

    def __init__(self, host: str, port: int, *, timeout: float, address: str) -> None:
        super().__init__(host, port, timeout=timeout)
        self.address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self.address, self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """The same over TLS: the certificate is checked against the host name."""

    def __init__(self, host: str, port: int, *, timeout: float, address: str) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self.address = address

    def connect(self) -> None:
        sock = socket.create_connection((self.address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class WebhookAnswer:
    status: int
    body: str


def webhook_post(*, url: str, headers: dict[str, str], body: bytes, timeout: float) -> WebhookAnswer:
    """POST body to url (checked again: a host may resolve elsewhere since the endpoint was saved). The whole exchange
    ends by `timeout` seconds: at the deadline the connection is shut, whatever it was waiting for. A redirect is an
    answer like any other (3xx), never followed."""
    try:
        checked = webhook_url_check(url)
    except WebhookUrlRefused as refused:
        raise WebhookSendError(f"refused: {refused}") from refused
    connection: http.client.HTTPConnection
    if checked.scheme == "https":
        connection = _PinnedHTTPSConnection(checked.host, checked.port, timeout=timeout, address=checked.addresses[0])
    else:
        connection = _PinnedHTTPConnection(checked.host, checked.port, timeout=timeout, address=checked.addresses[0])
    expired = threading.Event()
    deadline = threading.Timer(timeout, _shut, args=(connection, expired))
    deadline.daemon = True
    deadline.start()
    try:
        connection.request("POST", checked.target, body=body, headers=headers)
        response = connection.getresponse()
        answer = response.read(RESPONSE_BODY_KEPT).decode("utf-8", "replace")
        return WebhookAnswer(status=response.status, body=answer)
    except (OSError, http.client.HTTPException) as error:
        timed_out = expired.is_set() or isinstance(error, TimeoutError)  # the deadline, or the socket's own timeout
        detail = f"no answer within {timeout:g} s" if timed_out else f"{type(error).__name__}: {error}"
        raise WebhookSendError(detail) from error
    finally:
        deadline.cancel()
        connection.close()


def _shut(connection: http.client.HTTPConnection, expired: threading.Event) -> None:
    """The deadline: a blocked connect, send or read returns at once with an error."""
    expired.set()
    sock = connection.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
