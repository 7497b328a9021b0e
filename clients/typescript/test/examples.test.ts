/** Every TypeScript example of docs/integrations.md, compiled with the tests (scripts/extract-examples.mjs) and run as
 * a user would run it: its own process, the package imported by name, the service and the LLM from the environment. */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { env } from "./support.js";

const built = join(dirname(fileURLToPath(import.meta.url)), "..", "docs-examples");
const source = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "docs-examples", "examples.json");
const examples = JSON.parse(readFileSync(source, "utf8")) as { name: string; section: string; prints: string }[];

test("docs/integrations.md has examples in both of its TypeScript sections", () => {
  assert.deepEqual([...new Set(examples.map((e) => e.section))].sort(), ["TypeScript", "Vercel AI SDK"]);
});

for (const example of examples) {
  test(`docs/integrations.md example ${example.name} runs and prints ${example.prints}`, () => {
    const run = spawnSync(process.execPath, [join(built, `${example.name}.js`)], {
      encoding: "utf8",
      timeout: 120_000,
      env: {
        ...process.env,
        MEMORY_API_KEY: env("MEMORY_API_KEY_EXAMPLES"),
        LLM_BASE_URL: env("LLM_STUB_BASE_URL"),
        LLM_API_KEY: "stub",
        LLM_MODEL: "stub-model",
      },
    });
    assert.equal(run.status, 0, `exit ${run.status}\n${run.stdout}\n${run.stderr}`);
    assert.ok(run.stdout.includes(example.prints), `expected ${example.prints} in:\n${run.stdout}`);
  });
}
