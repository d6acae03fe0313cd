import type { TextToolCallFormat } from './text-tool-calls'

/** Where the model is: an OpenAI-compatible server (OpenAI, DeepSeek, Qwen, Ollama, vLLM, …). */
export interface Endpoint {
  /** The API base, up to and without `/chat/completions`, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`. */
  baseURL: string
  /** Sent as `Authorization: Bearer <apiKey>`; local servers usually need none. */
  apiKey?: string
  /** The model name, e.g. `gpt-4.1-mini`, `qwen3:8b`. */
  model: string
  /** Extra request headers. */
  headers?: Record<string, string>
  /**
   * Tool calls the model writes into its text, for servers without a parser for its format
   * (Hermes and Qwen's `<tool_call>`, Qwen3-Coder's and GLM's XML, DeepSeek's
   * `<｜tool▁calls▁begin｜>`, Kimi's `<|tool_calls_section_begin|>`, Mistral's `[TOOL_CALLS]`,
   * Llama's `<|python_tag|>`, a bare JSON call naming a tool of the turn): when a reply has no
   * structured calls and its text holds some, they are taken out of the text and run like any
   * call (see `extractTextToolCalls`, docs/text-tool-calls.md). `auto` reads every format it
   * knows and never reads a call out of a Markdown code example; `off` leaves the text as it is.
   * @default 'auto'
   */
  textToolCalls?: TextToolCallFormat | 'off'
}

/** `fetch` or anything with its shape, such as a Cordis app's `ctx.http`-backed one. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>

/** How failed requests are retried: 429, 5xx and network errors, with exponential backoff. */
export interface RetryOptions {
  /** Retries after the first attempt. @default 2 */
  retries?: number
  /** The first backoff in milliseconds; it doubles each time. @default 500 */
  baseDelay?: number
  /**
   * The longest wait between attempts, in milliseconds. A `Retry-After` asking for longer
   * ends the run with an `HTTP` error that says how long the server asked for. @default 20_000
   */
  maxDelay?: number
}
