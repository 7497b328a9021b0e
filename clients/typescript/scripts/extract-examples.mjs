// Writes the TypeScript examples of docs/integrations.md to docs-examples/ (compiled and run by test/examples.test.ts):
// every ```ts block under "## TypeScript" or "## Vercel AI SDK" that an `<!-- example: NAME, prints: TEXT -->`
// comment announces. The test fails if the examples it finds are not the ones the file announces.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const docs = readFileSync(join(here, "..", "..", "..", "docs", "integrations.md"), "utf8");
const out = join(here, "..", "docs-examples");
rmSync(out, { recursive: true, force: true });
mkdirSync(out);

const examples = [];
let section = "";
const pattern = /^## (.+)$|<!-- example: ([\w-]+), prints: (.+?) -->\s*```ts\n([\s\S]*?)```/gm;
for (const match of docs.matchAll(pattern)) {
  if (match[1] !== undefined) {
    section = match[1].trim();
    continue;
  }
  if (section !== "TypeScript" && section !== "Vercel AI SDK") continue;
  const [, , name, prints, code] = match;
  writeFileSync(join(out, `${name}.ts`), code);
  examples.push({ name, section, prints });
}
writeFileSync(join(out, "examples.json"), JSON.stringify(examples, null, 2));
console.log(`${examples.length} examples from docs/integrations.md`);
