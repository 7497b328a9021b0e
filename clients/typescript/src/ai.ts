/**
 * Memory as Vercel AI SDK tools (`agent-memory-client/ai`; needs the `ai` package, v5 or later):
 *
 *     const result = await generateText({ model, tools: memoryTools({ client, user: "gene" }), stopWhen: stepCountIs(3), prompt });
 *
 * The tools run on the service (POST /api/v1/tools/call), so the model's calls get the same checks as the service's
 * own OpenAI-format tools: argument validation, the injection screen, the sensitive-data policy, the agent's
 * review policy for agent-wide memory. A mistake of the model comes back to it as `{ok: false, error}` to correct.
 */
import { jsonSchema, tool } from "ai";

import type { AppendResult, MemoryContext, ToolCallResult } from "./types.js";
import type { MemoryClient } from "./client.js";

export interface MemoryToolsOptions {
  client: MemoryClient;
  /** The end user's external id: their memory is searched and saved. */
  user: string;
  /** The conversation's session id: the context block then includes the session's memory, saves name it. */
  session?: string;
}

interface SearchInput {
  query: string;
  top_k?: number;
  holds_at?: string;
}

interface GetEntityInput {
  name: string;
  include_ended?: boolean;
}

interface SaveInput {
  content: string;
  scope?: "user" | "agent";
  tags?: string[];
  key?: string;
  expires_in?: string;
  expires_at?: string;
}

/** `search_memory`, `get_entity`, `save_memory` and `memory_context`, for `tools` of generateText / streamText. */
export function memoryTools({ client, user, session }: MemoryToolsOptions) {
  const call = (name: string, input: object): Promise<ToolCallResult> =>
    client.toolCall({ name, arguments: { ...input }, user, ...(session === undefined ? {} : { session }) });
  return {
    search_memory: tool({
      description:
        "Search long-term memory for facts from earlier conversations (about this user, or known to you in general). " +
        "Use it when an answer may depend on something you were told before.",
      inputSchema: jsonSchema<SearchInput>({
        type: "object",
        properties: {
          query: { type: "string", description: "What to look for, as a question or keywords." },
          top_k: { type: "integer", minimum: 1, maximum: 20, description: "How many memories to return (default 5)." },
          holds_at: {
            type: "string",
            description:
              "Only what held in the world on this day (YYYY-MM-DD), for a question about a past time ('where did they " +
              "live in 2021?'); leave it out otherwise.",
          },
        },
        required: ["query"],
        additionalProperties: false,
      }),
      execute: (input: SearchInput) => call("search_memory", input),
    }),
    get_entity: tool({
      description:
        "What memory knows about someone or something by name (a person, place, organisation, thing or event): its " +
        "other names, how it relates to others (who works where, who is whose sister) and the facts that say so. " +
        "Use it for 'what do you know about X' and to follow a relation to the next person or place; 'me' is this user.",
      inputSchema: jsonSchema<GetEntityInput>({
        type: "object",
        properties: {
          name: { type: "string", description: "The name, or any name it is known by." },
          include_ended: {
            type: "boolean",
            description: "Also the relations that no longer hold, with when they held (default false).",
          },
        },
        required: ["name"],
        additionalProperties: false,
      }),
      execute: (input: GetEntityInput) => call("get_entity", input),
    }),
    save_memory: tool({
      description:
        "Remember a fact for future conversations. Save only durable facts worth recalling later, one per call.",
      inputSchema: jsonSchema<SaveInput>({
        type: "object",
        properties: {
          content: {
            type: "string",
            description: "One self-contained, objective statement naming who it is about (\"Gene's birthday is March 15th\").",
          },
          scope: {
            type: "string",
            enum: ["user", "agent"],
            description: "'user': about or for this user only (default). 'agent': true for every user.",
          },
          tags: { type: "array", items: { type: "string" }, description: "Optional labels." },
          key: {
            type: "string",
            description: "For a stable attribute of the user with one current value, its profile key in snake_case (home_city).",
          },
          expires_in: {
            type: "string",
            description: 'For something true only for a while ("my hotel room this week"): how long, as "P7D" or "7 days".',
          },
          expires_at: {
            type: "string",
            format: "date-time",
            description: "Or the time it stops being worth remembering (ISO 8601, in the future).",
          },
        },
        required: ["content"],
        additionalProperties: false,
      }),
      execute: (input: SaveInput) => call("save_memory", input),
    }),
    memory_context: tool({
      description:
        "What you remember about this user and conversation in general: notes on their preferences and situation.",
      inputSchema: jsonSchema<Record<string, never>>({ type: "object", properties: {}, additionalProperties: false }),
      execute: async (): Promise<{ text: string }> => {
        const context = (await client.context({ user, ...(session === undefined ? {} : { session }) })) as MemoryContext;
        return { text: context.text };
      },
    }),
  };
}

export interface TurnToRemember {
  client: MemoryClient;
  user: string;
  session: string;
  /** An id of this turn, unique in the session (a request id): a retried post stores nothing twice. */
  turnId: string;
  /** What the user said. */
  userMessage: string;
  /** What the model answered (generateText's `text`, or streamText's `onFinish` text). */
  reply: string;
}

/**
 * Post one turn (the user's message and the reply) to the ingestion API; memory forms from it in the background.
 * Call it after each generateText, or in streamText's `onFinish`; it never waits for memory work.
 */
export function rememberTurn({ client, user, session, turnId, userMessage, reply }: TurnToRemember): Promise<AppendResult> {
  return client.messagesAppend(
    session,
    [
      { role: "user", content: userMessage, idempotency_key: `${turnId}:user` },
      { role: "assistant", content: reply, idempotency_key: `${turnId}:assistant` },
    ],
    { user },
  );
}
