"""Background work gives way to requests (core/runtime/request_load.py): against the real Redis, no timed assertions
(a wait is bounded by settings, and each test waits on events, not on clocks)."""

import threading
import time

import pytest
from django.http import HttpResponse
from django.test import RequestFactory

from core.runtime import request_load
from core.runtime.request_load import (
    REQUEST_LOAD_KEY,
    RequestLoadMiddleware,
    cpu_work_admitted,
    cpu_work_paused,
    web_processes_busy,
)


@pytest.fixture(autouse=True)
def _no_marks(settings):
    settings.REQUEST_LOAD_LINGER_SECONDS = 0.3
    settings.FORMATION_GATE_SLOTS_BUSY = 1
    settings.FORMATION_GATE_MAX_WAIT_SECONDS = 30.0
    client = request_load._redis_client()
    client.delete(REQUEST_LOAD_KEY)
    request_load._gate.read_at = float("-inf")
    yield
    client.delete(REQUEST_LOAD_KEY)
    request_load._gate.read_at = float("-inf")


def gate_slots_held() -> int:
    with request_load._gate.condition:
        return request_load._gate.held


def _mark_busy(member: str, *, seconds: float) -> None:
    request_load._redis_client().zadd(REQUEST_LOAD_KEY, {member: int(1000 * (time.time() + seconds))})


def _fresh_read() -> None:
    request_load._gate.read_at = float("-inf")


def _wait_until(predicate, *, what: str, limit: float = 10.0) -> None:
    deadline = time.monotonic() + limit
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"never: {what}")
        time.sleep(0.005)


def _in_thread(work) -> tuple[threading.Thread, threading.Event]:
    done = threading.Event()

    def run():
        work()
        done.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, done


def test_the_gate_admits_every_section_at_once_when_no_web_process_is_busy():
    leave = threading.Event()
    entered = [threading.Event() for _ in range(3)]

    def section(event):
        with cpu_work_admitted():
            event.set()
            leave.wait(10)

    with cpu_work_admitted(), cpu_work_admitted():  # nested: the one slot
        assert gate_slots_held() == 1
        threads = [_in_thread(lambda event=event: section(event))[0] for event in entered]
        assert all(event.wait(10) for event in entered)
        assert gate_slots_held() == 4
        leave.set()
        for thread in threads:
            thread.join(10)
    assert gate_slots_held() == 0


def test_a_busy_web_process_holds_a_second_section_back_until_the_first_gives_its_slot():
    _mark_busy("web-1:100", seconds=60)
    _fresh_read()
    entered = threading.Event()
    with cpu_work_admitted():
        thread, done = _in_thread(lambda: _admit_and(entered))
        assert not entered.wait(0.3)  # held back while the slot is taken
    thread.join(10)
    assert entered.is_set() and done.is_set() and gate_slots_held() == 0


def _admit_and(event: threading.Event) -> None:
    with cpu_work_admitted():
        event.set()


def test_a_section_waiting_on_the_network_gives_its_slot_to_another():
    _mark_busy("web-1:100", seconds=60)
    _fresh_read()
    entered = threading.Event()
    with cpu_work_admitted():
        with cpu_work_paused():
            assert gate_slots_held() == 0
            thread, _ = _in_thread(lambda: _admit_and(entered))
            assert entered.wait(10)
            thread.join(10)
        assert gate_slots_held() == 1
    assert gate_slots_held() == 0


def test_the_wait_is_bounded_so_formation_never_stops(settings):
    """A web tier that never goes idle (or a slot never given back) delays a section by the bound, not for ever."""
    settings.FORMATION_GATE_MAX_WAIT_SECONDS = 0.05
    _mark_busy("web-1:100", seconds=600)
    _fresh_read()
    with cpu_work_admitted():
        entered = threading.Event()
        thread, _ = _in_thread(lambda: _admit_and(entered))
        thread.join(10)
        assert entered.is_set()
    assert gate_slots_held() == 0


def test_a_web_process_that_died_mid_request_stops_holding_formation_back_after_its_linger():
    """It never wrote that it went idle: its mark expires, as every mark does."""
    _mark_busy("web-dead:4242", seconds=0.2)
    assert web_processes_busy() == 1
    _wait_until(lambda: web_processes_busy() == 0, what="the dead process's mark expired")
    _fresh_read()
    with cpu_work_admitted():
        entered = threading.Event()
        thread, _ = _in_thread(lambda: _admit_and(entered))
        thread.join(10)
        assert entered.is_set()


def test_marks_older_than_a_minute_are_pruned():
    request_load._redis_client().zadd(REQUEST_LOAD_KEY, {"web-old:1": int(1000 * (time.time() - 120))})
    web_processes_busy()
    assert request_load._redis_client().zscore(REQUEST_LOAD_KEY, "web-old:1") is None


def test_redis_unreachable_holds_nothing_back(settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    assert web_processes_busy() == 0


def _middleware(view):
    return RequestLoadMiddleware(view)


def test_a_request_marks_its_web_process_busy_while_it_runs():
    inside = threading.Event()
    finish = threading.Event()

    def view(request):
        inside.set()
        finish.wait(10)
        return HttpResponse("ok")

    thread, _ = _in_thread(lambda: _middleware(view)(RequestFactory().get("/api/v1/search")))
    assert inside.wait(10)
    _wait_until(lambda: web_processes_busy() >= 1, what="the web process marked busy")
    assert request_load._process_load().in_flight == 1
    finish.set()
    thread.join(10)
    assert request_load._process_load().in_flight == 0


def test_the_request_is_counted_out_when_its_view_raises():
    def view(request):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        _middleware(view)(RequestFactory().get("/api/v1/search"))
    assert request_load._process_load().in_flight == 0


def test_an_idle_web_process_is_not_marked_after_its_linger():
    _middleware(lambda request: HttpResponse("ok"))(RequestFactory().get("/"))
    _wait_until(lambda: web_processes_busy() == 0, what="the mark expired after the last request")
    assert request_load._process_load().in_flight == 0


def test_no_marks_when_the_linger_is_zero(settings):
    settings.REQUEST_LOAD_LINGER_SECONDS = 0
    middleware = _middleware(lambda request: HttpResponse("ok"))
    before = request_load._process_load().in_flight
    seen = []
    middleware.get_response = lambda request: seen.append(request_load._process_load().in_flight) or HttpResponse()
    middleware(RequestFactory().get("/"))
    assert seen == [before]
