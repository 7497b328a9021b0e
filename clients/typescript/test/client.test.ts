/** The client against the live service: every method once, tenant isolation, hostile input. */
import assert from "node:assert/strict";
import { test } from "node:test";

import { MemoryAPIError } from "../src/index.js";
import { clientFor, collect, eventually } from "./support.js";

const client = clientFor("MEMORY_API_KEY");
const other = clientFor("MEMORY_API_KEY_OTHER_AGENT");

async function apiError(call: () => Promise<unknown>): Promise<MemoryAPIError> {
  try {
    await call();
  } catch (error) {
    assert.ok(error instanceof MemoryAPIError, `expected a MemoryAPIError, got ${String(error)}`);
    return error;
  }
  assert.fail("expected the call to fail");
}

test("ingestion: sessions and messages, a retry stores nothing twice, formation queued", async () => {
  const created = await client.sessionCreate({ user: "gene", session: "chat 1" });
  const turns = [
    { role: "user", content: "I moved to Lisbon last month for a new job.", idempotency_key: "m-1" },
    { role: "assistant", content: "How are you finding Lisbon?", idempotency_key: "m-2" },
    { role: "user", content: "We went kayaking on Lake Annecy before the move.", idempotency_key: "m-3" },
  ] as const;

  const first = await client.messagesAppend("chat 1", [...turns]);
  const retry = await client.messagesAppend("chat 1", [...turns]);
  const listed = await collect(client.messagesList("chat 1", { pageSize: 2 }));
  const queued = await client.sessionForm("chat 1");
  const closed = await client.sessionClose("chat 1");

  assert.equal(created.session, "chat 1");
  assert.equal(created.user, "gene");
  assert.equal(first.created_count, 3);
  assert.equal(retry.created_count, 0);
  assert.deepEqual(retry.messages.map((m) => m.id), first.messages.map((m) => m.id));
  assert.deepEqual(listed.map((m) => m.content), turns.map((t) => t.content));
  assert.equal(queued.session.session, "chat 1");
  assert.ok(closed.closed_at);
  assert.equal((await client.sessionGet("chat 1")).message_count, 3);

  // The worker embeds the messages in the background: then message search finds them.
  const hits = await eventually(
    () => client.messagesSearch({ query: "Where did they go kayaking?", user: "gene", top_k: 1 }),
    (found) => found.results[0]?.message.content.includes("Annecy") ?? false,
  );
  assert.equal(hits.results[0]?.session, "chat 1");

  // The formation sessionForm queued runs on the worker (the offline extractor in tests) and moves the cursor.
  const formed = await eventually(() => client.sessionGet("chat 1"), (info) => Boolean(info.last_formed_at));
  assert.equal(formed.formed_through_message_id, first.messages.at(-1)?.id);
});

test("facts: create, search with Server-Timing, update, history, delete, list", async () => {
  const saved = await client.factCreate({ content: "Gene's birthday is March 15th", user: "gene" });
  const again = await client.factCreate({ content: "Gene's birthday is March 15th", user: "gene" });
  const hits = await client.search({ query: "When was Gene born?", user: "gene", top_k: 1, mode: "semantic" });
  const timing = client.serverTiming;
  const revised = await client.factUpdate(saved.id, { content: "Gene's birthday is March 16th", reason: "corrected" });
  const history = await client.factHistory(revised.id);
  const fetched = await client.factGet(saved.id);
  await client.factDelete(revised.id, { reason: "asked to forget" });
  const current = await collect(client.factsList({ user: "gene" }));
  const everything = await collect(client.factsList({ user: "gene", status: "all", page_size: 1 }));

  assert.equal(again.id, saved.id);
  assert.deepEqual(saved.scopes, ["user"]);
  assert.equal(hits.results[0]?.fact.id, saved.id);
  assert.ok("vector_sql" in timing && "app" in timing && !("text_sql" in timing), JSON.stringify(timing));
  assert.deepEqual(history.versions.map((v) => v.content), ["Gene's birthday is March 15th", "Gene's birthday is March 16th"]);
  assert.equal(fetched.is_current, false);
  assert.deepEqual(current.filter((f) => f.content.includes("birthday")), []);
  assert.ok(everything.filter((f) => f.content.includes("birthday")).length >= 2);
});

test("world time: facts carry it, search takes holds_at, the timeline tells what changed in world-time order", async () => {
  const oslo = await client.factCreate({ content: "Ana lived in Oslo", user: "ana", world_time: { start: "2015" } });
  const ended = await client.factUpdate(oslo.id, { world_time: { start: "2015", end: "2018-06" }, reason: "moved" });
  await client.factCreate({ content: "Ana lives in Bergen", user: "ana", world_time: { start: "2018-06" } });
  const then = await client.search({ query: "Where did Ana live?", user: "ana", holds_at: "2016-01-01", mode: "text" });
  const timeline = await collect(client.userTimeline("ana", { page_size: 1, time_to: "2020-12-31" }));
  // The worker forms the facts' entities and relations in the background (from facts written by the API too).
  const [osloEntity] = await eventually(
    () => collect(client.entitiesList({ user: "ana", q: "oslo" })),
    (found) => found.length === 1,
  );
  const detail = await client.entityGet(osloEntity!.id);
  const osloTimeline = await collect(client.entityTimeline(osloEntity!.id));

  assert.deepEqual(oslo.world_time, {
    start: "2015-01-01",
    start_precision: "year",
    end: null,
    end_precision: "",
    holds_now: true,
  });
  assert.equal(ended.world_time.end, "2018-06-01");
  assert.equal(ended.world_time.holds_now, false);
  assert.equal(then.results[0]?.fact.content, "Ana lived in Oslo");
  assert.ok(!then.results.some((hit) => hit.fact.content === "Ana lives in Bergen"));
  assert.deepEqual(
    timeline.map((entry) => [entry.fact.content, entry.happened, entry.at, entry.placed_by]),
    [
      ["Ana lived in Oslo", "started", "2015-01-01", "start"],
      ["Ana lived in Oslo", "ended", "2018-06-01", "end"],
      ["Ana lives in Bergen", "started", "2018-06-01", "start"],
    ],
  );
  assert.equal(timeline[1]?.reason, "moved");
  assert.ok(detail.relations.every((relation) => relation.world_time.start === "2015-01-01"), JSON.stringify(detail));
  assert.deepEqual(osloTimeline.map((entry) => entry.happened), ["started", "ended"]);
  assert.equal((await apiError(() => collect(client.userTimeline("nobody-yet")))).status, 404);
  const profile = await client.profile("ana", { category: ["activities", "places"], include_history: true });
  assert.equal(profile.user, "ana");
  // Facts written through the API are filed by the lexicons: Bergen holds now, Oslo ended (history).
  assert.deepEqual(
    profile.categories.map((category) => [
      category.category,
      category.entries.flatMap((entry) => entry.facts.map((fact) => fact.content)),
      (category.history ?? []).flatMap((entry) => entry.facts.map((fact) => fact.content)),
    ]),
    [["places", ["Ana lives in Bergen"], ["Ana lived in Oslo"]]],
  );
  assert.equal((await client.profile(null)).user, null);
  assert.ok("category" in (await apiError(() => client.profile("ana", { category: ["astrology"] }))).fields);
  assert.equal((await apiError(() => client.profile("nobody-yet"))).status, 404);
  assert.ok(then.results.every((hit) => hit.reasons.length > 0));
  assert.equal((await apiError(() => client.entityGet(2 ** 40))).status, 404);
  assert.equal((await apiError(() => collect(client.entityTimeline(2 ** 40)))).status, 404);
  const badMoment = await apiError(() => client.search({ query: "x", user: "ana", holds_at: "last year" }));
  assert.ok("holds_at" in badMoment.fields, JSON.stringify(badMoment.fields));
  const backwards = await apiError(() => client.factCreate({ content: "Ana lived in Rome", user: "ana", world_time: { start: "2020", end: "2019" } }));
  assert.ok("world_time.end" in backwards.fields, JSON.stringify(backwards.fields));
});

test("context block (with its etag) and memory bundle", async () => {
  const context = await client.context({ user: "gene", session: "chat 1" });
  assert.ok(context);
  assert.equal(typeof context.text, "string");
  assert.equal(await client.context({ user: "gene", session: "chat 1", ifNoneMatch: context.etag }), null);

  await client.factCreate({ content: "Gene is allergic to peanuts", user: "gene" });
  const bundle = await client.bundle({ query: "What should Gene avoid eating?", user: "gene", token_budget: 800 });
  assert.ok(bundle.tokens_used <= 800);
  assert.match(bundle.parts.facts.text, /peanuts/);
});

test("tools and tool calls: a model's mistake is a result, not an exception", async () => {
  const names = (await client.tools()).map((t) => (t["function"] as { name: string }).name);
  const saved = await client.toolCall({ name: "save_memory", arguments: '{"content": "Gene is vegetarian"}', user: "gene" });
  const found = await client.toolCall({ name: "search_memory", arguments: { query: "diet" }, user: "gene" });
  const mistake = await client.toolCall({ name: "search_memory", arguments: "{not json", user: "gene" });

  assert.ok(["search_memory", "save_memory", "update_memory", "delete_memory"].every((n) => names.includes(n)));
  assert.equal(saved.ok, true);
  assert.match(JSON.stringify(found.result), /Gene is vegetarian/);
  assert.equal(mistake.ok, false);
  assert.match(mistake.error ?? "", /JSON/);
});

test("reference documents: create (once), get, list, delete", async () => {
  const document = await client.documentCreate({ title: "Returns", content: "Items can be returned within 30 days." });
  const twice = await client.documentCreate({ title: "Returns", content: "Items can be returned within 30 days." });
  const listed = await collect(client.documentsList());
  assert.equal(twice.id, document.id);
  assert.equal((await client.documentGet(document.id)).title, "Returns");
  assert.ok(listed.some((d) => d.id === document.id));
  await client.documentDelete(document.id);
  assert.equal((await apiError(() => client.documentGet(document.id))).status, 404);
});

test("tenant isolation: one agent's key never reads or changes another agent's memory", async () => {
  const secret = await client.factCreate({ content: "Gene's locker number is 4711", user: "gene" });
  const document = await client.documentCreate({ title: "Internal", content: "The staff wifi password is on the fridge." });
  await client.messagesAppend("private chat", [{ role: "user", content: "My locker code is 4711." }], { user: "gene" });

  for (const call of [
    () => other.factGet(secret.id),
    () => other.factHistory(secret.id),
    () => other.factUpdate(secret.id, { content: "Gene's locker number is 0000", reason: "x" }),
    () => other.factDelete(secret.id, { hard: true }),
    () => other.sessionGet("private chat"),
    () => other.documentGet(document.id),
    () => other.documentDelete(document.id),
    () => collect(other.userTimeline("gene")),
  ]) {
    const error = await apiError(call);
    assert.equal(error.status, 404, `${error.status} ${error.code}: ${error.message}`);
  }
  const searched = await other.search({ query: "locker code", user: "gene", mode: "text", fallback_to_recent: true });
  const listed = await collect(other.factsList({ user: "gene", status: "all" }));
  const viaTool = await other.toolCall({ name: "search_memory", arguments: { query: "locker code" }, user: "gene" });

  assert.deepEqual(searched.results, []);
  assert.deepEqual(listed, []);
  assert.doesNotMatch(JSON.stringify(viaTool), /4711/);
  assert.equal((await client.factGet(secret.id)).content, "Gene's locker number is 4711");
  assert.equal((await client.factGet(secret.id)).is_current, true);
});

test("hostile input: a MemoryAPIError naming the field, and nothing stored changes", async () => {
  const target = await client.factCreate({ content: "Gene's favourite colour is teal", user: "gene" });
  const before = await collect(client.factsList({ status: "all" }));
  const cases: [() => Promise<unknown>, string][] = [
    // A role the API does not know, sent as a plain JavaScript caller could (no compiler in the way).
    [() => client.messagesAppend("s", [{ role: "robot" as "user", content: "hello" }], { user: "gene" }), "messages.0.role"],
    [() => client.factCreate({ content: "null\u0000byte", user: "gene" }), "content"],
    [() => client.factCreate({ content: "x".repeat(100_000), user: "gene" }), "content"],
    [() => client.search({ query: "anything", top_k: -1 }), "top_k"],
    [() => client.search({ query: "' OR 1=1; DROP TABLE facts_fact; --", mode: "sql" as "text" }), "mode"],
    [() => client.factUpdate(target.id, { content: "", reason: "blank" }), "content"],
    [() => client.messagesAppend("no user yet", [{ role: "user", content: "hi" }]), "user"],
  ];
  for (const [call, field] of cases) {
    const error = await apiError(call);
    assert.ok(error.status >= 400 && error.status < 500, `${error.status} ${error.code}`);
    assert.ok(field in error.fields, `${field} not in ${JSON.stringify(error.fields)}`);
    assert.equal(typeof error.message, "string");
  }
  const missing = await apiError(() => client.sessionGet("../../admin/"));
  assert.equal(missing.code, "not_found");
  assert.deepEqual(await collect(client.factsList({ status: "all" })), before);
});

test("users: listed, read, exported and erased; feedback and expiry on a fact; a session deleted", async () => {
  await client.messagesAppend("erase-me chat", [{ role: "user", content: "I keep bees on the roof." }], { user: "erase-me" });
  const fact = await client.factCreate({ user: "erase-me", content: "Erase-me keeps bees on the roof", expires_in: "P7D" });
  const feedback = await client.factFeedback(fact.id, { rating: "useful", user: "erase-me" });
  const listed = (await collect(client.usersList({ page_size: 10 }))).map((user) => user.user);
  const detail = await client.userGet("erase-me");
  const exported = await client.userExport("erase-me");
  const deleted = await client.sessionDelete("erase-me chat");
  const erased = await client.userErase("erase-me");
  const again = await client.userErase("erase-me");

  assert.ok(fact.expires_at);
  assert.equal(feedback.outcome, "recorded");
  assert.ok(listed.includes("erase-me"));
  assert.equal(detail.memory.current_facts, 1);
  assert.equal(exported[0]?.kind, "export");
  assert.ok(exported.some((row) => row.kind === "fact"));
  assert.equal(deleted.deleted_counts["conversations.Session"], 1);
  assert.equal(erased.already_erased, false);
  assert.equal(again.already_erased, true);
  assert.equal((await apiError(() => client.userGet("erase-me"))).status, 404);
  assert.equal((await apiError(() => other.userGet("gene"))).status, 404);
});
