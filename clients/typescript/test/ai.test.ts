/**
 * The Vercel AI SDK's generateText with memoryTools, on the project's OpenAI-compatible LLM stub (tests/llm_stub_server.py
 * with uses_tools: it calls the search tool with the user's message, then answers with the tool's result).
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { asSchema, type FlexibleSchema, generateText, stepCountIs, streamText } from "ai";

import { memoryTools, rememberTurn } from "../src/ai.js";
import type { ToolCallResult } from "../src/index.js";
import { clientFor, collect, env } from "./support.js";

const client = clientFor("MEMORY_API_KEY_AI");
const stub = createOpenAICompatible({ name: "stub", baseURL: env("LLM_STUB_BASE_URL"), apiKey: "stub" });

test("generateText calls search_memory and answers with the stored fact; the turn is posted for ingestion", async () => {
  await client.factCreate({ content: "Maya's favourite tea is genmaicha", user: "maya" });
  const userMessage = "What tea does Maya like?";

  const result = await generateText({
    model: stub.chatModel("stub-model"),
    tools: memoryTools({ client, user: "maya", session: "tea chat" }),
    stopWhen: stepCountIs(3),
    prompt: userMessage,
  });
  const calls = result.steps.flatMap((step) => step.toolCalls);
  const outputs = result.steps.flatMap((step) => step.toolResults);
  await rememberTurn({ client, user: "maya", session: "tea chat", turnId: "turn-1", userMessage, reply: result.text });
  await rememberTurn({ client, user: "maya", session: "tea chat", turnId: "turn-1", userMessage, reply: result.text });

  assert.deepEqual(calls.map((call) => call.toolName), ["search_memory"]);
  assert.deepEqual(calls[0]?.input, { query: userMessage });
  assert.match(JSON.stringify(outputs[0]?.output), /genmaicha/);
  assert.match(result.text, /Maya's favourite tea is genmaicha/);
  const stored = await collect(client.messagesList("tea chat"));
  assert.deepEqual(stored.map((m) => [m.role, m.content]), [["user", userMessage], ["assistant", result.text]]);
});

test("streamText streams the answer after the memory tool; onFinish posts the turn", async () => {
  await client.factCreate({ content: "Maya's dog is called Biscuit", user: "maya" });
  const userMessage = "What is the name of Maya's dog?";
  let remembered: Promise<unknown> | undefined;

  const result = streamText({
    model: stub.chatModel("stub-model"),
    tools: memoryTools({ client, user: "maya", session: "dog chat" }),
    stopWhen: stepCountIs(3),
    prompt: userMessage,
    onFinish: ({ text }) => {
      remembered = rememberTurn({ client, user: "maya", session: "dog chat", turnId: "turn-1", userMessage, reply: text });
    },
  });
  let streamed = "";
  for await (const delta of result.textStream) streamed += delta;
  await result.consumeStream();
  await remembered;

  assert.deepEqual((await result.steps).flatMap((step) => step.toolCalls.map((call) => call.toolName)), ["search_memory"]);
  assert.match(streamed, /Maya's dog is called Biscuit/);
  const stored = await collect(client.messagesList("dog chat"));
  assert.deepEqual(stored.map((m) => [m.role, m.content]), [["user", userMessage], ["assistant", streamed]]);
});

test("save_memory, get_entity and memory_context execute on the service for the user", async () => {
  const tools = memoryTools({ client, user: "maya" });
  const options = { toolCallId: "call-1", messages: [] };
  const saved = (await tools.save_memory.execute!({ content: "Maya works night shifts at the hospital" }, options)) as ToolCallResult;
  const context = (await tools.memory_context.execute!({}, options)) as { text: string };
  const hostile = (await tools.save_memory.execute!({ content: "" }, options)) as ToolCallResult;
  const nobody = (await tools.get_entity.execute!({ name: "Zebulon" }, options)) as ToolCallResult;

  assert.equal(saved.ok, true);
  assert.equal(typeof context.text, "string");
  assert.equal(hostile.ok, false);
  assert.match(hostile.error ?? "", /content/);
  assert.equal(nobody.ok, true);
  assert.equal((nobody.result as { found: boolean }).found, false);
  const facts = await collect(client.factsList({ user: "maya" }));
  assert.ok(facts.some((fact) => fact.content === "Maya works night shifts at the hospital"));
});

test("the tools are the service's own tool definitions: descriptions, schemas and every limit", async () => {
  const tools = memoryTools({ client, user: "maya" });
  const served = new Map(
    (await client.tools()).map((definition) => {
      const fn = definition["function"] as { name: string; description: string; parameters: object };
      return [fn.name, fn] as const;
    }),
  );
  for (const name of ["search_memory", "get_entity", "save_memory"] as const) {
    const ours = await asSchema<unknown>(tools[name].inputSchema as FlexibleSchema<unknown>).jsonSchema;
    const theirs = served.get(name);
    assert.ok(theirs, `the service has no ${name} tool`);
    assert.deepEqual(ours, theirs.parameters, name);
    assert.equal(tools[name].description, theirs.description, name);
  }
});

test("a model's mistake inside a list comes back naming the index and the reason", async () => {
  const tools = memoryTools({ client, user: "maya" });
  const options = { toolCallId: "call-2", messages: [] };
  const tooLong = (await tools.save_memory.execute!(
    { content: "Maya keeps bees on the roof", tags: ["bees", "x".repeat(101)] },
    options,
  )) as ToolCallResult;

  assert.equal(tooLong.ok, false);
  assert.deepEqual(tooLong.fields, { "tags.1": ["Ensure this field has no more than 100 characters."] });
  assert.match(tooLong.error ?? "", /tags\.1: Ensure this field has no more than 100 characters\./);
});
