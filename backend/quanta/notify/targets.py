"""Where a webhook may point: public addresses only, unless QUANTA_ALLOW_PRIVATE_WEBHOOKS.

A channel URL is typed by an admin but its host name is resolved by whoever runs DNS for
it, so a URL could reach the metadata service (169.254.169.254), a database on loopback or
anything on the internal network. The host is resolved and every address it resolves to is
checked when a channel is saved, and again before each POST; the POST then connects to the
address that was checked (the name is only sent as Host and TLS server name), so a DNS
answer that changes in between (rebinding) cannot redirect it.
"""

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
DEFAULT_PORTS = {"http": 80, "https": 443}

# Checked in this order, so that an address gets its most telling name.
_KINDS = (
    ("is_unspecified", "unspecified"),
    ("is_loopback", "loopback"),
    ("is_link_local", "link-local"),
    ("is_multicast", "multicast"),
    ("is_private", "private"),
)


class RefusedTarget(Exception):
    """The URL points where webhooks may not go, or its host cannot be resolved."""


class UnresolvableHost(RefusedTarget):
    """The host name does not resolve (now: DNS may answer later)."""


@dataclass(frozen=True, slots=True)
class Target:
    """A checked webhook: its URL, host name, and the address to connect to (None when the
    check was skipped: private targets allowed)."""

    url: str
    host: str
    address: IPAddress | None


def address_refusal(address: IPAddress) -> str | None:
    """Why a webhook may not go to `address` ("loopback", "private", ...), None when public.

    >>> address_refusal(ipaddress.ip_address("169.254.169.254"))
    'link-local'
    >>> address_refusal(ipaddress.ip_address("::ffff:10.0.0.1"))
    'private'
    >>> address_refusal(ipaddress.ip_address("93.184.215.14")) is None
    True
    """
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    for attribute, kind in _KINDS:
        if getattr(address, attribute):
            return kind
    if not address.is_global:  # shared (100.64/10), documentation, reserved ranges
        return "non-public"
    return None


def resolve(host: str, port: int) -> list[IPAddress]:
    """Every address `host` resolves to (an IP literal: itself, without a DNS query)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise UnresolvableHost(
            f"The webhook's host name '{host}' does not resolve: {exc}."
        ) from None
    # getaddrinfo may add a scope to a link-local IPv6 address ("fe80::1%eth0").
    return [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]


def check_target(url: str, *, allow_private: bool) -> Target:
    """Resolve the URL's host and refuse it unless every address is public.

    Raises RefusedTarget with a sentence for the admin, before any connection is made.
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    if allow_private:
        return Target(url, host, None)
    port = parts.port or DEFAULT_PORTS.get(parts.scheme, 443)
    addresses = resolve(host, port)
    if not addresses:
        raise UnresolvableHost(f"The webhook's host name '{host}' resolves to no address.")
    for address in addresses:
        kind = address_refusal(address)
        if kind is not None:
            shown = host if host == str(address) else f"{host} ({address})"
            raise RefusedTarget(
                f"The webhook URL points at a {kind} address, {shown}: only public "
                "addresses are allowed (set QUANTA_ALLOW_PRIVATE_WEBHOOKS=true for a chat "
                "server on your own network)."
            )
    return Target(url, host, addresses[0])
