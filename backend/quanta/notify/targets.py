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


# IPv6 forms whose packets reach an IPv4 host named in the address (a NAT64 gateway, a 6to4
# relay, a Teredo server, a stack that maps them): that IPv4 address is checked like any
# other. The local-use NAT64 prefix (RFC 8215) is refused whole: a site's own translator
# reaches its internal hosts, and where the IPv4 address sits depends on the prefix length
# the site chose (RFC 6052), which the address does not say.
_IPV4_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")  # RFC 2765 (SIIT)
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")  # RFC 4291, deprecated; :: and ::1 aside
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052, the well-known prefix
_LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")  # RFC 8215
_LOW_32_BITS = 0xFFFFFFFF


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries: IPv4-mapped, IPv4-translated,
    IPv4-compatible, NAT64 (64:ff9b::/96), 6to4 (2002::/16), Teredo (2001::/32: its server
    and its client); none for any other address.

    >>> embedded_ipv4(ipaddress.IPv6Address("64:ff9b::7f00:1"))
    [IPv4Address('127.0.0.1')]
    >>> embedded_ipv4(ipaddress.IPv6Address("2002:a00:1::1"))
    [IPv4Address('10.0.0.1')]
    """
    if address.ipv4_mapped is not None:
        return [address.ipv4_mapped]
    if address.sixtofour is not None:
        return [address.sixtofour]
    if address.teredo is not None:
        return list(address.teredo)
    low = ipaddress.IPv4Address(int(address) & _LOW_32_BITS)
    if address in _IPV4_TRANSLATED or address in _NAT64:
        return [low]
    if address in _IPV4_COMPATIBLE and int(address) > 1:
        return [low]
    return []


def address_refusal(address: IPAddress) -> str | None:
    """Why a webhook may not go to `address` ("loopback", "private", ...), None when public.
    An IPv6 address carrying an IPv4 one is refused for what that IPv4 address is.

    >>> address_refusal(ipaddress.ip_address("169.254.169.254"))
    'link-local'
    >>> address_refusal(ipaddress.ip_address("::ffff:10.0.0.1"))
    'private'
    >>> address_refusal(ipaddress.ip_address("2002:7f00:1::1"))
    'loopback'
    >>> address_refusal(ipaddress.ip_address("93.184.215.14")) is None
    True
    """
    if isinstance(address, ipaddress.IPv6Address):
        if address in _LOCAL_NAT64:
            return "local-use NAT64"
        for inner in embedded_ipv4(address):
            kind = address_refusal(inner)
            if kind is not None:
                return kind
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
