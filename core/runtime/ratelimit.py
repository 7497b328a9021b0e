"""Fixed-window counters in the shared cache (Redis), so that every web process counts the same requests.

A counter is one Redis key per (identity, window) created with its expiry and incremented atomically (INCR). Fixed
windows may let through up to twice the limit around a window's boundary; that is precise enough to stop abuse and
costs one round trip. The counters fail open: while Redis is unreachable nothing is limited (and a warning is
logged), because refusing every request, ingestion included, would turn a cache outage into an API outage."""

from __future__ import annotations

import logging
import math
import re
import time
from dataclasses import dataclass

from django.core.cache import cache

logger = logging.getLogger(__name__)

_UNITS = {
    "s": 1,
    "sec": 1,
    "second": 1,
    "m": 60,
    "min": 60,
    "minute": 60,
    "h": 3600,
    "hour": 3600,
    "d": 86400,
    "day": 86400,
}
_PERIODS = _UNITS | {f"{unit}s": seconds for unit, seconds in _UNITS.items() if len(unit) > 1}
_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([a-z]+)\s*$")


@dataclass(frozen=True)
class Rate:
    limit: int
    period_seconds: int


def rate_parse(rate: str) -> Rate | None:
    """'1200/minute', '20/s', '100/5m'. An empty rate or a limit of 0 means no limit (None)."""
    if not rate.strip():
        return None
    match = _RATE.match(rate.lower())
    if match is None or match.group(3) not in _PERIODS:
        raise ValueError(f"invalid rate {rate!r}: use a count per period, like '1200/minute'")
    limit, multiple = int(match.group(1)), int(match.group(2) or 1)
    return Rate(limit=limit, period_seconds=multiple * _PERIODS[match.group(3)]) if limit else None


def _window(period_seconds: int, now: float) -> tuple[int, float]:
    """The window's number and the seconds until it ends."""
    return int(now // period_seconds), period_seconds - now % period_seconds


def window_retry_after(period_seconds: int, *, now: float | None = None) -> int:
    return max(1, math.ceil(_window(period_seconds, time.time() if now is None else now)[1]))


def window_count(key: str, period_seconds: int) -> int:
    """Hits counted in the current window (0 when the cache is unreachable)."""
    number, _ = _window(period_seconds, time.time())
    try:
        return int(cache.get(f"ratelimit:{key}:{number}") or 0)
    except Exception:  # fail open: see the module docstring
        logger.warning("rate limit: the cache is unreachable; %s is not limited", key.split(":", 1)[0])
        return 0


def window_hit(key: str, period_seconds: int) -> int:
    """Count one hit in the current window; returns the window's count so far (0 when the cache is unreachable)."""
    number, remaining = _window(period_seconds, time.time())
    full_key = f"ratelimit:{key}:{number}"
    try:
        cache.add(full_key, 0, timeout=math.ceil(remaining) + 1)
        return cache.incr(full_key)
    except ValueError:  # the key expired between add and incr: a new window has begun
        return 1
    except Exception:  # fail open: see the module docstring
        logger.warning("rate limit: the cache is unreachable; %s is not limited", key.split(":", 1)[0])
        return 0


def window_clear(key: str, period_seconds: int) -> None:
    number, _ = _window(period_seconds, time.time())
    try:
        cache.delete(f"ratelimit:{key}:{number}")
    except Exception:
        logger.warning("rate limit: the cache is unreachable; could not clear %s", key.split(":", 1)[0])
