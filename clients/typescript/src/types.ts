/**
 * The request and response shapes of the client, all taken from `schema.ts`, which openapi-typescript generates
 * from the service's OpenAPI schema (drf-spectacular). They are looked up by path and method, so a change of the
 * API changes them, and a test fails while `schema.ts` is older than the service (see README.md).
 */
import type { components, paths } from "./schema.js";

type Method = "get" | "post" | "patch" | "delete";
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type JsonOf<T> = T extends { content: { "application/json": infer Body } } ? Body : never;

/** The JSON body an operation accepts. */
export type RequestBody<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { requestBody?: infer Body } ? JsonOf<NonNullable<Body>> : never;

/** The JSON body of an operation's success (200, 201 or 202). */
export type ResponseBody<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { responses: infer Responses }
    ? Responses extends { 200: infer Ok }
      ? JsonOf<Ok>
      : Responses extends { 201: infer Created }
        ? JsonOf<Created>
        : Responses extends { 202: infer Accepted }
          ? JsonOf<Accepted>
          : never
    : never;

/** An operation's query parameters. */
export type QueryParameters<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { parameters: { query?: infer Query } } ? NonNullable<Query> : never;

type Schemas = components["schemas"];

export type MemoryContext = ResponseBody<"/api/v1/memory/context", "get">;
export type MemoryContextQuery = QueryParameters<"/api/v1/memory/context", "get">;
export type MemoryBundleRequest = RequestBody<"/api/v1/memory/bundle", "post">;
export type MemoryBundle = ResponseBody<"/api/v1/memory/bundle", "post">;
export type SearchRequest = RequestBody<"/api/v1/memory/search", "post">;
export type SearchResults = ResponseBody<"/api/v1/memory/search", "post">;
export type FactHit = Schemas["FactHitOutput"];
export type MessageSearchRequest = RequestBody<"/api/v1/messages/search", "post">;
export type MessageSearchResults = ResponseBody<"/api/v1/messages/search", "post">;
export type MessageHit = Schemas["MessageHitOutput"];

export type FactsListQuery = Omit<QueryParameters<"/api/v1/facts", "get">, "cursor">;
export type Fact = Schemas["FactOutput"];
export type FactCreateRequest = RequestBody<"/api/v1/facts", "post">;
export type FactUpdateRequest = RequestBody<"/api/v1/facts/{fact_id}", "patch">;
export type FactDeleteQuery = QueryParameters<"/api/v1/facts/{fact_id}", "delete">;
export type FactHistory = ResponseBody<"/api/v1/facts/{fact_id}/history", "get">;
export type FactVersion = Schemas["FactVersionOutput"];
/** When a statement held in the world (not when memory recorded it), with whether it holds today. */
export type WorldTime = Schemas["WorldTimeOutput"];
/** World time as a client gives it (fact create and update): dates as YYYY, YYYY-MM or YYYY-MM-DD. */
export type WorldTimeInput = Schemas["WorldTimeInput"];

export type TimelineQuery = Omit<QueryParameters<"/api/v1/users/{user_id}/timeline", "get">, "cursor">;
export type TimelineEntry = Schemas["TimelineEntryOutput"];
export type EntitiesListQuery = Omit<QueryParameters<"/api/v1/entities", "get">, "cursor">;
export type Entity = Schemas["EntityOutput"];
export type EntityDetail = ResponseBody<"/api/v1/entities/{entity_id}", "get">;
export type Relation = Schemas["RelationOutput"];

export type ToolDefinitions = ResponseBody<"/api/v1/tools", "get">;
export type ToolCallRequest = RequestBody<"/api/v1/tools/call", "post">;
export type ToolCallResult = ResponseBody<"/api/v1/tools/call", "post">;

export type SessionCreateRequest = RequestBody<"/api/v1/sessions", "post">;
export type SessionInfo = ResponseBody<"/api/v1/sessions/{session_id}", "get">;
export type MessageIn = Schemas["MessageInput"];
export type AppendResult = ResponseBody<"/api/v1/sessions/{session_id}/messages", "post">;
export type StoredMessage = Schemas["MessageOutput"];
export type FormationQueued = ResponseBody<"/api/v1/sessions/{session_id}/form", "post">;

export type SessionDeleted = ResponseBody<"/api/v1/sessions/{session_id}", "delete">;

export type FactFeedbackRequest = RequestBody<"/api/v1/facts/{fact_id}/feedback", "post">;
export type FactFeedback = ResponseBody<"/api/v1/facts/{fact_id}/feedback", "post">;

export type UsersListQuery = Omit<QueryParameters<"/api/v1/users", "get">, "cursor">;
export type EndUser = Schemas["UserOutput"];
export type UserDetail = ResponseBody<"/api/v1/users/{user_id}", "get">;
export type UserErasure = ResponseBody<"/api/v1/users/{user_id}", "delete">;
/** What memory holds of a user (or agent-wide) by category: entries with their source facts and world time. */
export type Profile = ResponseBody<"/api/v1/users/{user_id}/profile", "get">;
export type ProfileCategory = Schemas["ProfileCategory"];
export type ProfileEntry = Schemas["ProfileEntry"];
/** `category`: only those categories (an unknown one is a 400 naming `category`); `include_history`: ended entries. */
export interface ProfileQuery {
  category?: string[];
  include_history?: boolean;
}
/** One line of a native export (`export_memories`, `GET /api/v1/users/{user_id}/export`). */
export type ExportRow = { kind: string } & Record<string, unknown>;

/** The administration API's shapes (an operator key's; the client here is an agent's). */
export type AdminAgent = Schemas["AgentOutput"];
export type AdminAgentCreateRequest = RequestBody<"/api/v1/admin/agents", "post">;
export type AdminAPIKey = Schemas["APIKeyOutput"];
export type AdminAPIKeyCreated = Schemas["APIKeyCreatedOutput"];
export type AdminWebhook = Schemas["WebhookOutput"];
export type AdminWebhookDelivery = Schemas["WebhookDeliveryOutput"];

export type DocumentCreateRequest = RequestBody<"/api/v1/documents", "post">;
export type ReferenceDocument = Schemas["DocumentOutput"];

/** The service's one error shape: `{"error": {"code", "message", "fields"}}`. */
export type ErrorBody = Schemas["ErrorBody"];
