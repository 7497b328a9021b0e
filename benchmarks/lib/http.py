"""One timed request to the service's API, as the overhead benchmarks make it: the standard library's client, so
that what is measured is the server and not a client library."""

from __future__ import annotations

import json
import time
import urllib.request


def timed_post(*, base_url: str, key: str, path: str, payload: dict, expected_status: int) -> tuple[float, str]:
    """POST `payload` as JSON with the agent's key: the client's latency (ms) and the response's Server-Timing
    header ("" when it has none). A status other than `expected_status` fails the run."""
    request = urllib.request.Request(
        f"{base_url}{path}",
        data=json.dumps(payload).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        method="POST",
    )
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=60) as response:
        response.read()
        assert response.status == expected_status, response.status
        timing = response.headers.get("Server-Timing", "")
    return (time.perf_counter() - started) * 1000, timing
