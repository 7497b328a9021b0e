"""Who may read the metrics: a scraper that presents METRICS_BEARER_TOKEN (Authorization: Bearer ...), or one whose
address is in METRICS_ALLOWED_NETWORKS (CIDRs; the connection's own address, never a forwarded header, which any
caller can write). Neither set: nobody, and /metrics says how to open it. The agents' API keys give no access: the
metrics describe every tenant. The same check guards /metrics and the Celery workers' exporters."""

from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass
from functools import lru_cache

from django.conf import settings


@dataclass(frozen=True)
class Refusal:
    status: int  # 401: a token would let the caller in; 403: nothing would
    message: str


def _networks() -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return _parsed_networks(tuple(settings.METRICS_ALLOWED_NETWORKS))


@lru_cache(maxsize=4)
def _parsed_networks(networks: tuple[str, ...]) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(network.strip(), strict=False) for network in networks if network.strip())


def _address_allowed(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    if ip.version == 6 and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return any(ip in network for network in _networks())


def _token_presented(authorization: str) -> bool:
    expected = settings.METRICS_BEARER_TOKEN
    scheme, _, token = authorization.partition(" ")
    return bool(expected) and scheme.lower() == "bearer" and hmac.compare_digest(token.strip(), expected)


def metrics_access_refusal(*, remote_address: str, authorization: str) -> Refusal | None:
    """None when the caller may read the metrics, else why not."""
    if _token_presented(authorization) or _address_allowed(remote_address):
        return None
    if settings.METRICS_BEARER_TOKEN:
        return Refusal(401, "Metrics need the bearer token (METRICS_BEARER_TOKEN) in an Authorization header.")
    if settings.METRICS_ALLOWED_NETWORKS:
        return Refusal(403, "Metrics are open only to the addresses in METRICS_ALLOWED_NETWORKS.")
    return Refusal(403, "Metrics are closed: set METRICS_BEARER_TOKEN or METRICS_ALLOWED_NETWORKS to open them.")
