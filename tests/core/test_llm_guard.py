"""The provider guard's shared state in the real Redis: the token buckets of the rate limiter and the circuit
breaker's transitions (closed → open → half-open with one probe → closed, or open again for longer)."""

import pytest

from core.llm.guard import llm_breaker_state, llm_call_admit, llm_call_report, llm_redis


@pytest.fixture
def key(settings) -> str:
    settings.LLM_CIRCUIT_FAILURE_THRESHOLD = 3
    settings.LLM_CIRCUIT_OPEN_SECONDS = 30
    settings.LLM_CIRCUIT_MAX_OPEN_SECONDS = 100
    return "test-provider"


def _open_time_runs_out(key: str, settings) -> None:
    """Move the breaker's reopening time into the past, as if its open period had passed."""
    breaker = f"{settings.CACHES['default']['KEY_PREFIX']}:llm-guard:{key}:breaker"
    llm_redis().hset(breaker, "until", 0)


def test_requests_per_minute_admit_that_many_then_say_how_long_to_wait(key, settings):
    settings.LLM_RATE_LIMIT_RPM = 2

    first, second, third = (llm_call_admit(provider_key=key, estimated_tokens=100) for _ in range(3))

    assert (first.verdict, second.verdict) == ("go", "go")
    # The bucket refills at 2 a minute: one request's worth takes about 30 s.
    assert third.verdict == "wait" and 25 < third.seconds <= 30


def test_tokens_per_minute_are_corrected_by_the_reply_s_real_usage(key, settings):
    settings.LLM_RATE_LIMIT_TPM = 1000

    assert llm_call_admit(provider_key=key, estimated_tokens=400).verdict == "go"
    # The reply used 900 tokens, not 400: the bucket holds 100 now, less than the next call's estimate.
    llm_call_report(provider_key=key, outcome="answered", token_correction=500)
    admission = llm_call_admit(provider_key=key, estimated_tokens=400)

    assert admission.verdict == "wait" and admission.seconds > 15


def test_no_limits_configured_admits_everything(key):
    assert all(llm_call_admit(provider_key=key, estimated_tokens=10**6).verdict == "go" for _ in range(50))


def test_the_breaker_opens_after_the_threshold_of_failures_in_a_row(key, settings):
    assert llm_call_report(provider_key=key, outcome="failure") == ""
    assert llm_call_report(provider_key=key, outcome="answered") == ""  # an answer resets the count
    assert [llm_call_report(provider_key=key, outcome="failure") for _ in range(3)] == ["", "", "opened"]

    admission = llm_call_admit(provider_key=key, estimated_tokens=10)
    state = llm_breaker_state(provider_key=key)
    assert admission.verdict == "open" and 25 < admission.seconds <= 30
    assert state.state == "open" and state.retry_in_seconds > 25


def test_after_the_open_time_one_probe_goes_and_its_success_closes_the_breaker(key, settings):
    for _ in range(3):
        llm_call_report(provider_key=key, outcome="failure")
    _open_time_runs_out(key, settings)

    assert llm_breaker_state(provider_key=key).state == "half-open"
    probe = llm_call_admit(provider_key=key, estimated_tokens=10)
    other = llm_call_admit(provider_key=key, estimated_tokens=10)
    assert probe.verdict == "probe" and other.verdict == "open"  # one probe at a time

    assert llm_call_report(provider_key=key, outcome="answered") == "closed"
    assert llm_breaker_state(provider_key=key).state == "closed"
    assert llm_call_admit(provider_key=key, estimated_tokens=10).verdict == "go"


def test_a_failed_probe_opens_the_breaker_again_for_twice_as_long(key, settings):
    for _ in range(3):
        llm_call_report(provider_key=key, outcome="failure")
    _open_time_runs_out(key, settings)
    assert llm_call_admit(provider_key=key, estimated_tokens=10).verdict == "probe"

    llm_call_report(provider_key=key, outcome="failure")

    state = llm_breaker_state(provider_key=key)
    assert state.state == "open" and 55 < state.retry_in_seconds <= 60
