/** 429 with Retry-After, against the service's own throttle (the pytest test sets API_THROTTLE_RATE low for it). */
import assert from "node:assert/strict";
import { test } from "node:test";

import { MemoryAPIError } from "../src/index.js";
import { clientFor } from "./support.js";

interface Seen {
  at: number;
  status: number;
  retryAfter: string | null;
}

function observed(): { seen: Seen[]; fetch: typeof fetch } {
  const seen: Seen[] = [];
  return {
    seen,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      seen.push({ at: performance.now(), status: response.status, retryAfter: response.headers.get("Retry-After") });
      return response;
    },
  };
}

async function throttledError(): Promise<MemoryAPIError> {
  const noRetry = clientFor("MEMORY_API_KEY_THROTTLED", { maxRetries: 0 });
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      await noRetry.tools();
    } catch (error) {
      assert.ok(error instanceof MemoryAPIError);
      return error;
    }
  }
  assert.fail("the throttle never answered 429");
}

test("a 429 is retried after its Retry-After, then succeeds", async () => {
  for (let round = 0; round < 3; round++) {
    const refused = await throttledError();
    assert.equal(refused.status, 429);
    assert.equal(refused.code, "throttled");
    assert.ok(refused.retryAfter !== undefined && refused.retryAfter >= 1);

    const { seen, fetch } = observed();
    const tools = await clientFor("MEMORY_API_KEY_THROTTLED", { maxRetries: 5, fetch }).tools();
    assert.ok(tools.length > 0);
    if (seen.length === 1) continue; // the throttle's window ended between the two calls: exhaust it again
    const [first, last] = [seen[0]!, seen.at(-1)!];
    assert.equal(first.status, 429);
    assert.equal(last.status, 200);
    for (let i = 1; i < seen.length; i++) {
      const waited = seen[i]!.at - seen[i - 1]!.at;
      assert.ok(waited >= Number(seen[i - 1]!.retryAfter) * 1000 - 5, `retried after ${waited} ms`);
    }
    return;
  }
  assert.fail("the throttle's window kept ending between two calls");
});

test("the retry is bounded: a longer Retry-After than the client waits for is thrown at once", async () => {
  for (let round = 0; round < 3; round++) {
    await throttledError();
    const { seen, fetch } = observed();
    const impatient = clientFor("MEMORY_API_KEY_THROTTLED", { maxRetries: 5, maxRetryDelayMs: 1, fetch });
    const started = performance.now();
    const outcome = await impatient.tools().then(
      () => "answered",
      (error: unknown) => error,
    );
    if (outcome === "answered") continue; // the window ended between the two calls: exhaust it again
    assert.ok(outcome instanceof MemoryAPIError && outcome.status === 429, String(outcome));
    assert.equal(seen.length, 1);
    assert.ok(performance.now() - started < 1000);
    return;
  }
  assert.fail("the throttle's window kept ending between two calls");
});
