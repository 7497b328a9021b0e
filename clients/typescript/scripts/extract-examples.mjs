// Writes the TypeScript examples of docs/integrations.md to docs-examples/ (compiled and run by test/examples.test.ts):
// every ```ts block under "## TypeScript" or "## Vercel AI SDK" that an `<!-- example: NAME, prints: TEXT -->`
// comment announces. It fails when an announcement is not followed by a ```ts block it can read.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const SECTIONS = ["TypeScript", "Vercel AI SDK"];
const here = dirname(fileURLToPath(import.meta.url));
const docs = readFileSync(join(here, "..", "..", "..", "docs", "integrations.md"), "utf8");
const out = join(here, "..", "docs-examples");
rmSync(out, { recursive: true, force: true });
mkdirSync(out);

const examples = [];
for (const part of docs.split(/^## /m).slice(1)) {
  const section = part.slice(0, part.indexOf("\n")).trim();
  if (!SECTIONS.includes(section)) continue;
  const announced = part.match(/<!-- example:/g)?.length ?? 0;
  const found = [...part.matchAll(/<!-- example: ([\w-]+), prints: (.+?) -->\n```ts\n([\s\S]*?)```/g)];
  if (found.length !== announced) {
    throw new Error(`docs/integrations.md, ${section}: ${announced} examples announced, ${found.length} readable`);
  }
  for (const [, name, prints, code] of found) {
    writeFileSync(join(out, `${name}.ts`), code);
    examples.push({ name, section, prints });
  }
}
writeFileSync(join(out, "examples.json"), JSON.stringify(examples, null, 2));
console.log(`${examples.length} examples from docs/integrations.md`);
