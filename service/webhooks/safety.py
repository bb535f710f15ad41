"""Where webhooks may be sent: http(s) URLs whose every address is public (SSRF guard).

The host is resolved and each address checked before any connection is made; the request
then goes to the checked address (with the original Host header and TLS server name), so a
DNS answer that changes between check and connect cannot redirect it. Hosts in
``DIGEST_WEBHOOK_ALLOWED_HOSTS`` (tests, on-premise receivers) skip the address check.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from service.errors import UnprocessableInput

Resolver = Callable[..., list[Any]]
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class UnsafeWebhookURL(UnprocessableInput):
    code = "unsafe_webhook_url"


@dataclass(frozen=True)
class CheckedTarget:
    url: str
    scheme: str
    host: str
    port: int
    addresses: list[IPAddress] = field(default_factory=list)  # empty when allow-listed

    @property
    def pinned(self) -> bool:
        return bool(self.addresses)

    def connect_url(self) -> str:
        """The URL to connect to: the checked address in place of the host name."""
        if not self.addresses:
            return self.url
        address = self.addresses[0]
        netloc = f"[{address}]" if address.version == 6 else str(address)
        parts = urlsplit(self.url)
        return urlunsplit(
            (parts.scheme, f"{netloc}:{self.port}", parts.path or "/", parts.query, "")
        )

    def host_header(self) -> str:
        default_port = 443 if self.scheme == "https" else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == default_port else f"{host}:{self.port}"


def _why_refused(address: IPAddress) -> str | None:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address (cloud metadata services live there)"
    if address.is_multicast:
        return "a multicast address"
    if address.is_unspecified:
        return "an unspecified address"
    if address.is_reserved:
        return "a reserved address"
    if address.is_private:
        return "a private address"
    if not address.is_global:
        return "an address that is not publicly routable"
    return None


def parse_allowed_hosts(value: str | Collection[str]) -> frozenset[str]:
    items = value.split(",") if isinstance(value, str) else value
    return frozenset(item.strip().lower().strip("[]") for item in items if item.strip())


def check_url(
    url: str, allowed_hosts: Collection[str], resolve: Resolver = socket.getaddrinfo
) -> CheckedTarget:
    """The URL's target if webhooks may be sent there; UnsafeWebhookURL (422) otherwise."""
    try:
        parts = urlsplit(url.strip())
        port_given = parts.port
    except ValueError as exc:
        raise UnsafeWebhookURL(f"webhook URL {url!r} is malformed: {exc}") from exc
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise UnsafeWebhookURL(
            f"webhook URL {url!r} must use http or https, not {scheme or 'no scheme'!r}"
        )
    host = (parts.hostname or "").lower()
    if not host:
        raise UnsafeWebhookURL(f"webhook URL {url!r} has no host")
    if parts.username is not None or parts.password is not None:
        raise UnsafeWebhookURL(f"webhook URL {url!r} must not carry credentials before the host")
    port = port_given or (443 if scheme == "https" else 80)
    if host in allowed_hosts:
        return CheckedTarget(url.strip(), scheme, host, port)
    addresses = _addresses_of(host, port, resolve)
    for address in addresses:
        reason = _why_refused(address)
        if reason is not None:
            shown = host if str(address) == host else f"{host} ({address})"
            raise UnsafeWebhookURL(
                f"webhook URL {url!r} is refused: {shown} is {reason}; webhooks only go to "
                "public addresses unless the host is listed in DIGEST_WEBHOOK_ALLOWED_HOSTS"
            )
    return CheckedTarget(url.strip(), scheme, host, port, addresses)


def _addresses_of(host: str, port: int, resolve: Resolver) -> list[IPAddress]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass  # a name, not a literal address
    try:
        infos = resolve(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise UnsafeWebhookURL(f"webhook URL host {host!r} does not resolve: {exc}") from exc
    addresses = list(
        dict.fromkeys(ipaddress.ip_address(info[4][0].split("%", 1)[0]) for info in infos)
    )
    if not addresses:
        raise UnsafeWebhookURL(f"webhook URL host {host!r} has no address")
    return addresses
