"""Client-side protection of the LLM provider, shared by every process and thread through Redis (the cache's
database): a rate limiter (requests and tokens per minute) and a circuit breaker.

- **Rate limiter**: two token buckets (LLM_RATE_LIMIT_RPM, LLM_RATE_LIMIT_TPM) refilled continuously. A call takes
  one request and its estimated tokens; when a bucket is short it is told how long to wait, and takes nothing. The
  estimate is corrected by the reply's real usage, so the bucket may go below zero and later calls wait longer.
- **Circuit breaker**: LLM_CIRCUIT_FAILURE_THRESHOLD failed calls in a row (network errors, timeouts, 5xx; a 429 is
  throttling, not an outage) open it for LLM_CIRCUIT_OPEN_SECONDS. While open, formation does not call the provider:
  sessions wait (formation.services.formation_holds). Once the time is up, one caller at a time is let through
  as a probe: success closes the breaker (and the waiting sessions are queued again), failure opens it again for
  twice as long, up to LLM_CIRCUIT_MAX_OPEN_SECONDS.

Each check is one Lua script, atomic in Redis. Time is Redis's own clock, so processes with skewed clocks agree.
Everything fails open: with Redis unreachable nothing is limited and the breaker counts as closed (Celery, which
needs the same Redis, is down then anyway)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache

import redis
from django.conf import settings

logger = logging.getLogger(__name__)

# A probe that neither succeeds nor fails within this many seconds (its worker died) lets another caller probe.
PROBE_TTL_SECONDS = 120

_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local state = redis.call('HMGET', KEYS[1], 'state', 'until')
if state[1] == 'open' then
  local open_until = tonumber(state[2]) or 0
  if now < open_until then return {'open', tostring(open_until - now)} end
  if not redis.call('SET', KEYS[2], '1', 'NX', 'EX', tonumber(ARGV[4])) then return {'open', '1'} end
  return {'probe', '0'}
end
local function level(key, limit)
  if limit <= 0 then return nil end
  local bucket = redis.call('HMGET', key, 'level', 'ts')
  local value = tonumber(bucket[1]) or limit
  local since = tonumber(bucket[2]) or now
  return math.min(limit, value + math.max(0, now - since) * limit / 60)
end
local rpm, tpm, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local requests, tokens = level(KEYS[3], rpm), level(KEYS[4], tpm)
local wait = 0
if requests and requests < 1 then wait = math.max(wait, (1 - requests) * 60 / rpm) end
if tokens then
  local needed = math.min(cost, tpm)
  if tokens < needed then wait = math.max(wait, (needed - tokens) * 60 / tpm) end
end
if wait > 0 then return {'wait', tostring(wait)} end
if requests then redis.call('HSET', KEYS[3], 'level', requests - 1, 'ts', now); redis.call('EXPIRE', KEYS[3], 120) end
if tokens then redis.call('HSET', KEYS[4], 'level', tokens - cost, 'ts', now); redis.call('EXPIRE', KEYS[4], 120) end
return {'go', '0'}
"""

# ARGV: outcome ('answered' or 'failure'), token correction, tpm, threshold, base open seconds, max open seconds.
# Returns 'closed' when this call closed an open breaker, 'opened' when it opened it, '' otherwise.
_REPORT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local tpm, correction = tonumber(ARGV[3]), tonumber(ARGV[2])
if tpm > 0 and correction ~= 0 then
  local bucket = redis.call('HMGET', KEYS[4], 'level', 'ts')
  local value = tonumber(bucket[1]) or tpm
  local since = tonumber(bucket[2]) or now
  value = math.min(tpm, value + math.max(0, now - since) * tpm / 60) - correction
  redis.call('HSET', KEYS[4], 'level', value, 'ts', now)
  redis.call('EXPIRE', KEYS[4], 120)
end
local outcome = ARGV[1]
local state = redis.call('HGET', KEYS[1], 'state')
if outcome == 'answered' then
  if state == 'open' then
    redis.call('DEL', KEYS[1], KEYS[2])
    return 'closed'
  end
  if redis.call('HGET', KEYS[1], 'failures') then redis.call('HDEL', KEYS[1], 'failures') end
  return ''
end
local failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
if state == 'open' or failures >= tonumber(ARGV[4]) then
  local opens = redis.call('HINCRBY', KEYS[1], 'opens', 1)
  local seconds = math.min(tonumber(ARGV[6]), tonumber(ARGV[5]) * 2 ^ (opens - 1))
  local since = redis.call('HGET', KEYS[1], 'since') or now
  redis.call('HSET', KEYS[1], 'state', 'open', 'until', now + seconds, 'since', since, 'failures', 0)
  redis.call('DEL', KEYS[2])
  if state ~= 'open' then return 'opened' end
end
return ''
"""


@dataclass(frozen=True)
class Admission:
    """What the guard says before a call: 'go' (this call may proceed; 'probe' is a go that tests an open breaker),
    'wait' (the rate limit: try again after `seconds`) or 'open' (the breaker: not before `seconds`)."""

    verdict: str
    seconds: float = 0.0


@dataclass(frozen=True)
class BreakerState:
    state: str  # closed, open (calls refused until `retry_in_seconds`), half-open (a probe may run now)
    consecutive_failures: int
    retry_in_seconds: float
    open_since: float | None  # Unix time


@lru_cache(maxsize=1)
def llm_redis() -> redis.Redis:
    return redis.Redis.from_url(settings.CACHE_URL, socket_timeout=2, socket_connect_timeout=2)


def _keys(provider_key: str) -> list[str]:
    prefix = f"{settings.CACHES['default'].get('KEY_PREFIX', '')}:llm-guard:{provider_key}"
    return [f"{prefix}:breaker", f"{prefix}:probe", f"{prefix}:requests", f"{prefix}:tokens"]


def provider_key_for(*, provider_name: str) -> str:
    """One set of limits and one breaker per provider endpoint."""
    return f"{provider_name}:{settings.LLM_BASE_URL}" if provider_name == "openai" else provider_name


def llm_call_admit(*, provider_key: str, estimated_tokens: int) -> Admission:
    try:
        verdict, seconds = llm_redis().eval(
            _ACQUIRE,
            4,
            *_keys(provider_key),
            settings.LLM_RATE_LIMIT_RPM,
            settings.LLM_RATE_LIMIT_TPM,
            estimated_tokens,
            PROBE_TTL_SECONDS,
        )
    except redis.RedisError:
        logger.warning("LLM guard: Redis unreachable; the call is not rate limited")
        return Admission("go")
    return Admission(verdict.decode(), float(seconds))


def llm_call_report(*, provider_key: str, outcome: str, token_correction: int = 0) -> str:
    """Record a call's outcome: 'answered' (any reply, a 429 or a malformed one included: the provider is up) or
    'failure' (no answer, or a 5xx: counts towards opening the breaker). Returns 'closed' or 'opened' when this
    report changed the breaker."""
    try:
        change = llm_redis().eval(
            _REPORT,
            4,
            *_keys(provider_key),
            outcome,
            token_correction,
            settings.LLM_RATE_LIMIT_TPM,
            settings.LLM_CIRCUIT_FAILURE_THRESHOLD,
            settings.LLM_CIRCUIT_OPEN_SECONDS,
            settings.LLM_CIRCUIT_MAX_OPEN_SECONDS,
        )
    except redis.RedisError:
        logger.warning("LLM guard: Redis unreachable; the call's outcome is not recorded")
        return ""
    change = change.decode() if isinstance(change, bytes) else str(change or "")
    if change == "opened":
        logger.warning("LLM circuit breaker opened for %s: formation pauses", provider_key)
    elif change == "closed":
        logger.warning("LLM circuit breaker closed for %s: formation resumes", provider_key)
    return change


def llm_breaker_state(*, provider_key: str) -> BreakerState:
    client = llm_redis()
    breaker = _keys(provider_key)[0]
    pipe = client.pipeline(transaction=False)
    pipe.hgetall(breaker)
    pipe.time()
    fields, (seconds, micros) = pipe.execute()
    fields = {key.decode(): value.decode() for key, value in fields.items()}
    now = seconds + micros / 1_000_000
    failures = int(fields.get("failures", 0))
    if fields.get("state") != "open":
        return BreakerState("closed", failures, 0.0, None)
    remaining = float(fields.get("until", 0)) - now
    return BreakerState(
        "open" if remaining > 0 else "half-open", failures, max(0.0, remaining), float(fields.get("since", now))
    )
