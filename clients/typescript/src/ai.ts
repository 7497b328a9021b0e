/**
 * Memory as Vercel AI SDK tools (`agent-memory-client/ai`; needs the `ai` package, v5 or later):
 *
 *     const result = await generateText({ model, tools: memoryTools({ client, user: "gene" }), stopWhen: stepCountIs(3), prompt });
 *
 * The tools run on the service (POST /api/v1/tools/call), so the model's calls get the same checks as the service's
 * own OpenAI-format tools: argument validation, the injection screen, the sensitive-data policy, the agent's
 * review policy for agent-wide memory. A mistake of the model comes back to it as `{ok: false, error, fields}` to
 * correct. Their descriptions and input schemas are the service's own (src/tools.generated.ts, generated from its
 * tool definitions): every limit the service enforces is one the model is shown.
 */
import { jsonSchema, tool } from "ai";

import { TOOL_DEFINITIONS } from "./tools.generated.js";
import type { AppendResult, MemoryContext, ToolCallResult } from "./types.js";
import type { MemoryClient } from "./client.js";

/** A tool's JSON Schema as the `ai` package takes it, whichever major: the generated object is that schema. */
const schemaOf = <INPUT>(definition: { parameters: unknown }) =>
  jsonSchema<INPUT>(definition.parameters as Parameters<typeof jsonSchema>[0]);

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
      description: TOOL_DEFINITIONS.search_memory.description,
      inputSchema: schemaOf<SearchInput>(TOOL_DEFINITIONS.search_memory),
      execute: (input: SearchInput) => call("search_memory", input),
    }),
    get_entity: tool({
      description: TOOL_DEFINITIONS.get_entity.description,
      inputSchema: schemaOf<GetEntityInput>(TOOL_DEFINITIONS.get_entity),
      execute: (input: GetEntityInput) => call("get_entity", input),
    }),
    save_memory: tool({
      description: TOOL_DEFINITIONS.save_memory.description,
      inputSchema: schemaOf<SaveInput>(TOOL_DEFINITIONS.save_memory),
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
