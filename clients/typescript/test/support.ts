/** What the pytest test (tests/clients/test_typescript_sdk.py) hands the Node tests: the live service and its keys. */
import { MemoryClient, type MemoryClientOptions } from "../src/index.js";

export function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run these tests through tests/clients/test_typescript_sdk.py`);
  return value;
}

export function clientFor(keyVariable: string, options: Partial<MemoryClientOptions> = {}): MemoryClient {
  return new MemoryClient({ baseUrl: env("MEMORY_URL"), apiKey: env(keyVariable), timeoutMs: 60_000, ...options });
}

/** Poll `read` until `done` holds of its value (the Celery worker's background work), or fail after `timeoutMs`. */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`still not done after ${timeoutMs} ms: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}
