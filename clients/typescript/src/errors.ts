import type { ErrorBody } from "./types.js";

/** An error response of the service, in its one error shape: `{"error": {"code", "message", "fields"}}`. */
export class MemoryAPIError extends Error {
  override readonly name = "MemoryAPIError";
  readonly status: number;
  readonly code: string;
  /** Per field (a dotted path such as `messages.0.role`), what is wrong with it. */
  readonly fields: ErrorBody["fields"];
  /** Seconds the service asked to wait (Retry-After), when it said. */
  readonly retryAfter: number | undefined;

  constructor(init: { status: number; code: string; message: string; fields?: ErrorBody["fields"]; retryAfter?: number }) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.fields = init.fields ?? {};
    this.retryAfter = init.retryAfter;
  }

  /** The error of a response that was not a success: the service's error body, else its first 500 characters. */
  static async fromResponse(response: Response, retryAfter?: number): Promise<MemoryAPIError> {
    const raw = await response.text();
    try {
      const body = (JSON.parse(raw) as { error: ErrorBody }).error;
      if (typeof body.code === "string" && typeof body.message === "string") {
        return new MemoryAPIError({ status: response.status, ...body, ...(retryAfter === undefined ? {} : { retryAfter }) });
      }
    } catch {
      // not the service's error shape (a proxy's page, say): reported as http_error below
    }
    return new MemoryAPIError({
      status: response.status,
      code: "http_error",
      message: raw.slice(0, 500) || response.statusText,
      ...(retryAfter === undefined ? {} : { retryAfter }),
    });
  }
}
