export { MemoryClient, serverTimingParse } from "./client.js";
export type { MemoryClientOptions } from "./client.js";
export { MemoryAPIError } from "./errors.js";
export type * from "./types.js";
export type { components, paths } from "./schema.js";
