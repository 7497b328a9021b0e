/**
 * A small, typed client over the platform's `fetch`: no dependencies, so it runs on Node 20+, Deno, Bun, browsers
 * and edge runtimes (Vercel, Cloudflare Workers) alike. The surface mirrors the Python client (clients/python).
 */
import { MemoryAPIError } from "./errors.js";
import type {
  AppendResult,
  DocumentCreateRequest,
  EndUser,
  EntitiesListQuery,
  Entity,
  EntityDetail,
  ExportRow,
  Fact,
  FactCreateRequest,
  FactFeedback,
  FactFeedbackRequest,
  FactDeleteQuery,
  FactHistory,
  FactsListQuery,
  FactUpdateRequest,
  FormationQueued,
  MemoryBundle,
  MemoryBundleRequest,
  MemoryContext,
  MemoryContextQuery,
  MessageIn,
  MessageSearchRequest,
  MessageSearchResults,
  ReferenceDocument,
  SearchRequest,
  SearchResults,
  SessionDeleted,
  SessionInfo,
  StoredMessage,
  TimelineEntry,
  TimelineQuery,
  ToolCallRequest,
  ToolCallResult,
  ToolDefinitions,
  Profile,
  ProfileQuery,
  UserDetail,
  UserErasure,
  UsersListQuery,
} from "./types.js";

export interface MemoryClientOptions {
  /** Where the service runs, e.g. `https://memory.example.com` (without `/api/v1`). */
  baseUrl: string;
  /** The agent's API key (`Authorization: Bearer …`). */
  apiKey: string;
  /** Give up on a request after this long (default 30 s). */
  timeoutMs?: number;
  /** How many times a 429 is retried after its Retry-After (default 2; 0: never). */
  maxRetries?: number;
  /** The longest Retry-After the client waits for (default 10 s); a longer one is thrown at once. */
  maxRetryDelayMs?: number;
  /** The fetch to use (default: the global one), for a runtime without it or to observe requests. */
  fetch?: typeof fetch;
}

type QueryValue = string | number | boolean | null | undefined;

interface RequestOptions {
  query?: Record<string, QueryValue>;
  body?: unknown;
  headers?: Record<string, string>;
  /** The success body is JSON lines (an export): parsed into an array of rows. */
  jsonLines?: boolean;
}

/** A page of a cursor-paginated list. */
interface Page<T> {
  next?: string | null;
  results: T[];
}

export class MemoryClient {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly maxRetryDelayMs: number;
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;
  #serverTiming: Record<string, number> = {};

  constructor(options: MemoryClientOptions) {
    if (!options.baseUrl) throw new TypeError("MemoryClient: baseUrl is required");
    if (!options.apiKey) throw new TypeError("MemoryClient: apiKey is required");
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#apiKey = options.apiKey;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.maxRetries = options.maxRetries ?? 2;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 10_000;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /**
   * Where the service spent the last response's time, in milliseconds per stage, from its Server-Timing header:
   * e.g. embed, text_sql, vector_sql, fuse, hits_sql, serialize, and app (all of it). What the caller measured
   * beyond `app` is the network and HTTP. With requests in flight at once, it is the one that finished last.
   */
  get serverTiming(): Record<string, number> {
    return { ...this.#serverTiming };
  }

  // --- memory reads -------------------------------------------------------------------------------------------

  /** The always-in-context block. With `ifNoneMatch` (a previous result's etag), null when unchanged. */
  async context(options: MemoryContextQuery & { ifNoneMatch?: string } = {}): Promise<MemoryContext | null> {
    const { ifNoneMatch, ...query } = options;
    const headers: Record<string, string> = ifNoneMatch ? { "If-None-Match": ifNoneMatch } : {};
    const { status, body } = await this.#request("GET", "/api/v1/memory/context", { query, headers });
    return status === 304 ? null : (body as MemoryContext);
  }

  /** Everything memory offers for one prompt, cut to `token_budget` (see docs/api.md). */
  async bundle(request: MemoryBundleRequest): Promise<MemoryBundle> {
    return (await this.#request("POST", "/api/v1/memory/bundle", { body: request })).body as MemoryBundle;
  }

  /**
   * Hybrid fact search (mode, top_k, min_similarity, recency_weight, as_of, holds_at, time_from… see docs/api.md).
   * `holds_at`: only what held in the world at that moment; each hit's fact carries its `world_time`.
   */
  async search(request: SearchRequest): Promise<SearchResults> {
    return (await this.#request("POST", "/api/v1/memory/search", { body: request })).body as SearchResults;
  }

  /** The user's past messages (one session's when given) that best answer `query`. */
  async messagesSearch(request: MessageSearchRequest): Promise<MessageSearchResults> {
    return (await this.#request("POST", "/api/v1/messages/search", { body: request })).body as MessageSearchResults;
  }

  // --- facts --------------------------------------------------------------------------------------------------

  /** Every matching fact, newest first, following the cursor pages: `for await (const fact of client.factsList())`. */
  factsList(query: FactsListQuery = {}): AsyncGenerator<Fact> {
    return this.#paginate<Fact>("/api/v1/facts", { status: "current", page_size: 50, ...query });
  }

  /** Store a fact (embedded at once); the same content in the same scope returns the stored one. */
  async factCreate(request: FactCreateRequest): Promise<Fact> {
    return (await this.#request("POST", "/api/v1/facts", { body: request })).body as Fact;
  }

  async factGet(factId: number): Promise<Fact> {
    return (await this.#request("GET", `/api/v1/facts/${idOf(factId)}`)).body as Fact;
  }

  /** Write a new version of the fact (the old one stays in its history). Returns the new version. */
  async factUpdate(factId: number, request: FactUpdateRequest): Promise<Fact> {
    return (await this.#request("PATCH", `/api/v1/facts/${idOf(factId)}`, { body: request })).body as Fact;
  }

  /** Close the fact (kept as history), or with `hard: true` erase its whole lineage. */
  async factDelete(factId: number, options: FactDeleteQuery = {}): Promise<void> {
    await this.#request("DELETE", `/api/v1/facts/${idOf(factId)}`, { query: options });
  }

  /**
   * How a fact served: useful, wrong, outdated or harmful, the agent's or on behalf of `user`. A user's wrong or
   * outdated on their own fact closes it; on shared or curated memory it waits for an operator's review.
   */
  async factFeedback(factId: number, request: FactFeedbackRequest): Promise<FactFeedback> {
    const path = `/api/v1/facts/${idOf(factId)}/feedback`;
    return (await this.#request("POST", path, { body: request })).body as FactFeedback;
  }

  /** Every version of the fact's lineage, oldest first, with the reason for each change. */
  async factHistory(factId: number): Promise<FactHistory> {
    return (await this.#request("GET", `/api/v1/facts/${idOf(factId)}/history`)).body as FactHistory;
  }

  // --- what changed, and the entity graph --------------------------------------------------------------------

  /**
   * What changed about the end user, in the order it happened in the world, following the pages:
   * `for await (const entry of client.userTimeline("gene"))`. A user the agent has never seen: a 404 MemoryAPIError.
   */
  userTimeline(user: string, query: TimelineQuery = {}): AsyncGenerator<TimelineEntry> {
    return this.#paginate<TimelineEntry>(`/api/v1/users/${encodeURIComponent(user)}/timeline`, { page_size: 50, ...query });
  }

  /** What changed about one entity (the versions of the facts that stated its relations), as userTimeline. */
  entityTimeline(entityId: number, query: TimelineQuery = {}): AsyncGenerator<TimelineEntry> {
    return this.#paginate<TimelineEntry>(`/api/v1/entities/${idOf(entityId)}/timeline`, { page_size: 50, ...query });
  }

  /** The user's entities (the agent-wide ones without `user`), newest first; `q`: a part of any of its names. */
  entitiesList(query: EntitiesListQuery = {}): AsyncGenerator<Entity> {
    return this.#paginate<Entity>("/api/v1/entities", { page_size: 50, ...query });
  }

  /** One entity with its relations (current and ended, each with its world time) and the facts stating them. */
  async entityGet(entityId: number): Promise<EntityDetail> {
    return (await this.#request("GET", `/api/v1/entities/${idOf(entityId)}`)).body as EntityDetail;
  }

  // --- tools --------------------------------------------------------------------------------------------------

  /** OpenAI-format tool definitions, to pass as `tools` to a chat completion. */
  async tools(): Promise<ToolDefinitions["tools"]> {
    return ((await this.#request("GET", "/api/v1/tools")).body as ToolDefinitions).tools;
  }

  /**
   * Execute a tool call as the model made it (`arguments` may be its JSON string). A mistake of the model is not an
   * exception: the result has `ok: false` and an `error` to send back as the tool message.
   */
  async toolCall(request: ToolCallRequest): Promise<ToolCallResult> {
    return (await this.#request("POST", "/api/v1/tools/call", { body: request })).body as ToolCallResult;
  }

  // --- ingestion ----------------------------------------------------------------------------------------------

  /** Create the session for the user, or fetch it if it exists. */
  async sessionCreate(request: { user: string; session: string }): Promise<SessionInfo> {
    return (await this.#request("POST", "/api/v1/sessions", { body: request })).body as SessionInfo;
  }

  async sessionGet(session: string): Promise<SessionInfo> {
    return (await this.#request("GET", sessionPath(session))).body as SessionInfo;
  }

  /**
   * Store messages (the session is created for `user` on first use). Messages with an `idempotency_key` the session
   * already holds come back as stored, not stored twice: retrying is safe.
   */
  async messagesAppend(session: string, messages: MessageIn[], options: { user?: string } = {}): Promise<AppendResult> {
    const body = { messages, ...(options.user === undefined ? {} : { user: options.user }) };
    return (await this.#request("POST", `${sessionPath(session)}/messages`, { body })).body as AppendResult;
  }

  /** Every message of the session, oldest first, following the cursor pages. */
  messagesList(session: string, options: { pageSize?: number } = {}): AsyncGenerator<StoredMessage> {
    return this.#paginate<StoredMessage>(`${sessionPath(session)}/messages`, { page_size: options.pageSize ?? 100 });
  }

  /** Mark the session closed; formation of what is not formed yet is queued. Closing it again changes nothing. */
  async sessionClose(session: string): Promise<SessionInfo> {
    return (await this.#request("POST", `${sessionPath(session)}/close`, { body: {} })).body as SessionInfo;
  }

  /** Queue memory formation of the session now. */
  async sessionForm(session: string): Promise<FormationQueued> {
    return (await this.#request("POST", `${sessionPath(session)}/form`, { body: {} })).body as FormationQueued;
  }

  /**
   * Delete the session: its messages, session-scope memory and jobs. What was learnt from it (facts, user and agent
   * reflections) stays; erase the user to remove that too.
   */
  async sessionDelete(session: string): Promise<SessionDeleted> {
    return (await this.#request("DELETE", sessionPath(session))).body as SessionDeleted;
  }

  // --- users --------------------------------------------------------------------------------------------------

  /** The agent's end users, newest first, with their last activity (`active_after`, `active_before` filter it). */
  usersList(query: UsersListQuery = {}): AsyncGenerator<EndUser> {
    return this.#paginate<EndUser>("/api/v1/users", { page_size: 50, ...query });
  }

  /** One end user: what is kept about them, counted by kind, and their last activity. */
  async userGet(user: string): Promise<UserDetail> {
    return (await this.#request("GET", userPath(user))).body as UserDetail;
  }

  /**
   * What memory holds of the end user by category (one entry per value, with its source facts, world time and last
   * mention), and their keyed attributes; `user` null: the agent-wide profile. A user the agent has never seen: a 404
   * MemoryAPIError.
   */
  async profile(user: string | null, query: ProfileQuery = {}): Promise<Profile> {
    const params = new URLSearchParams();
    if (query.category?.length) params.set("category", query.category.join(","));
    if (query.include_history) params.set("include_history", "true");
    const path = (user === null ? "/api/v1/profile" : `${userPath(user)}/profile`) + (params.size ? `?${params}` : "");
    return (await this.#request("GET", path)).body as Profile;
  }

  /** The user's native export (what `import_memories --format native` reads back), row by row. */
  async userExport(user: string): Promise<ExportRow[]> {
    return (await this.#request("GET", `${userPath(user)}/export`, { jsonLines: true })).body as ExportRow[];
  }

  /** Erase the user: every row kept about them; an erasure record stays. Repeating it is safe (`already_erased`). */
  async userErase(user: string): Promise<UserErasure> {
    return (await this.#request("DELETE", userPath(user))).body as UserErasure;
  }

  // --- reference documents ------------------------------------------------------------------------------------

  /** The agent's reference documents, newest first. */
  documentsList(options: { pageSize?: number } = {}): AsyncGenerator<ReferenceDocument> {
    return this.#paginate<ReferenceDocument>("/api/v1/documents", { page_size: options.pageSize ?? 50 });
  }

  /** Register a reference document: facts that only restate it are not stored as memory. The same text twice is
   * stored once. */
  async documentCreate(request: DocumentCreateRequest): Promise<ReferenceDocument> {
    return (await this.#request("POST", "/api/v1/documents", { body: request })).body as ReferenceDocument;
  }

  async documentGet(documentId: number): Promise<ReferenceDocument> {
    return (await this.#request("GET", `/api/v1/documents/${idOf(documentId)}`)).body as ReferenceDocument;
  }

  /** Remove a reference document and its chunks. */
  async documentDelete(documentId: number): Promise<void> {
    await this.#request("DELETE", `/api/v1/documents/${idOf(documentId)}`);
  }

  // --- plumbing -----------------------------------------------------------------------------------------------

  async *#paginate<T>(path: string, query: Record<string, QueryValue>): AsyncGenerator<T> {
    let page = (await this.#request("GET", path, { query })).body as Page<T>;
    for (;;) {
      yield* page.results;
      if (!page.next) return;
      page = (await this.#request("GET", page.next)).body as Page<T>;
    }
  }

  async #request(method: string, path: string, options: RequestOptions = {}): Promise<{ status: number; body: unknown }> {
    const url = new URL(/^https?:\/\//.test(path) ? path : this.baseUrl + path);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.#apiKey}`,
      Accept: "application/json",
      ...options.headers,
    };
    const payload = options.body === undefined ? undefined : JSON.stringify(withoutUndefined(options.body));
    if (payload !== undefined) headers["Content-Type"] = "application/json";

    for (let attempt = 0; ; attempt++) {
      const response = await this.#fetch(url, {
        method,
        headers,
        ...(payload === undefined ? {} : { body: payload }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      this.#serverTiming = serverTimingParse(response.headers.get("Server-Timing"));
      if (response.status === 304) return { status: 304, body: null };
      if (response.ok) {
        const raw = await response.text();
        if (options.jsonLines) {
          const rows = raw.split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line) as unknown);
          return { status: response.status, body: rows };
        }
        return { status: response.status, body: raw ? JSON.parse(raw) : null };
      }
      const retryAfter = retryAfterSeconds(response.headers.get("Retry-After"));
      const waitMs = retryAfter === undefined ? undefined : retryAfter * 1000;
      // A 429 was refused before any work: resending it is safe, within the bounds the caller set.
      if (response.status === 429 && attempt < this.maxRetries && waitMs !== undefined && waitMs <= this.maxRetryDelayMs) {
        await response.body?.cancel();
        await new Promise((resolve) => setTimeout(resolve, waitMs));
        continue;
      }
      throw await MemoryAPIError.fromResponse(response, retryAfter);
    }
  }
}

/** `{"dur": …}` per stage of a Server-Timing header: `embed;dur=3.1, app;dur=12.5`. */
export function serverTimingParse(header: string | null): Record<string, number> {
  const stages: Record<string, number> = {};
  for (const part of (header ?? "").split(",")) {
    const [name, ...parameters] = part.trim().split(";");
    for (const parameter of parameters) {
      const [key, value] = parameter.trim().split("=");
      const duration = Number(value);
      if (name && key === "dur" && value !== undefined && Number.isFinite(duration)) stages[name] = duration;
    }
  }
  return stages;
}

/** Retry-After in seconds: a number of seconds, or an HTTP date. */
function retryAfterSeconds(header: string | null): number | undefined {
  if (header === null || header.trim() === "") return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

function sessionPath(session: string): string {
  return `/api/v1/sessions/${encodeURIComponent(session)}`;
}

function userPath(user: string): string {
  return `/api/v1/users/${encodeURIComponent(user)}`;
}

function idOf(id: number): number {
  if (!Number.isSafeInteger(id)) throw new TypeError(`an id is an integer, not ${String(id)}`);
  return id;
}

/** JSON without the keys left undefined, as the Python client drops None: "not given" is not "null". */
function withoutUndefined(body: unknown): unknown {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return body;
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined));
}
