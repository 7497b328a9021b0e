"""LLM tokens spent today (UTC), per agent and in all, for the cost guard. Counted in Redis as each reply arrives
(LLMCall rows are written in bulk when a job ends, too late for a check that must see the calls of jobs still
running); a counter Redis lost is rebuilt from the LLMCall rows of the day."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import redis
from django.conf import settings
from django.db.models import Sum
from django.db.models.functions import Coalesce

from core.llm.guard import llm_redis
from core.models import LLMCall

logger = logging.getLogger(__name__)

_INCREMENT_IF_PRESENT = """
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('INCRBY', KEYS[1], ARGV[1]) end
return false
"""
_KEEP_SECONDS = 2 * 86400


def day_start(now: datetime | None = None) -> datetime:
    now = now or datetime.now(UTC)
    return now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def day_end(now: datetime | None = None) -> datetime:
    """When today's budgets renew."""
    return day_start(now) + timedelta(days=1)


def _key(agent_id: int | None, day: datetime) -> str:
    who = f"agent:{agent_id}" if agent_id is not None else "all"
    return f"{settings.CACHES['default'].get('KEY_PREFIX', '')}:llm-spend:{day:%Y-%m-%d}:{who}"


def _recorded(agent_id: int | None, day: datetime) -> int:
    calls = LLMCall.objects.filter(created_at__gte=day, created_at__lt=day + timedelta(days=1))
    if agent_id is not None:
        calls = calls.filter(agent_id=agent_id)
    totals = calls.aggregate(prompt=Coalesce(Sum("prompt_tokens"), 0), completion=Coalesce(Sum("completion_tokens"), 0))
    return totals["prompt"] + totals["completion"]


def llm_spend_add(*, agent_id: int | None, tokens: int) -> None:
    """Count a reply's tokens for its agent and for the deployment."""
    if tokens <= 0:
        return
    day = day_start()
    for who in (agent_id, None) if agent_id is not None else (None,):
        key = _key(who, day)
        try:
            client = llm_redis()
            if client.eval(_INCREMENT_IF_PRESENT, 1, key, tokens) is None and not client.set(
                key, _recorded(who, day) + tokens, nx=True, ex=_KEEP_SECONDS
            ):
                client.incrby(key, tokens)
        except redis.RedisError:
            logger.warning("LLM spend: Redis unreachable; %d tokens not counted towards today's budget", tokens)


def llm_spend_today(*, agent_id: int | None) -> int:
    """Tokens spent today by the agent's memory work (agent_id None: by every agent)."""
    day = day_start()
    key = _key(agent_id, day)
    try:
        value = llm_redis().get(key)
        if value is not None:
            return int(value)
        recorded = _recorded(agent_id, day)
        llm_redis().set(key, recorded, nx=True, ex=_KEEP_SECONDS)
        return recorded
    except redis.RedisError:
        logger.warning("LLM spend: Redis unreachable; today's spend read from the call log")
        return _recorded(agent_id, day)
