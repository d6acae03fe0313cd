import type Schema from 'schemastery'
import type { Approver } from '../types/approver'

/**
 * A form a tool asks a person to fill while it runs (`call.elicit`): a flat object of
 * strings, numbers, booleans and enums, as MCP elicitation allows. Given as a schemastery
 * schema, or as the JSON Schema of an MCP `requestedSchema` (kept verbatim for MCP clients).
 */
export type ElicitationSchema<T = any> = Schema<any, T> | ElicitationJsonSchema

/** An MCP elicitation `requestedSchema`: `{ type: 'object', properties, required? }` of primitive fields. */
export interface ElicitationJsonSchema {
  type: 'object'
  properties: Record<string, Record<string, unknown>>
  required?: string[]
  [key: string]: unknown
}

/**
 * How a person answered `call.elicit`: `accept` with the values (validated against the
 * schema, defaults applied), `decline` (they said no), or `cancel` (nobody answered: the
 * question was dismissed, expired, had no one to ask, or the call was cancelled).
 */
export type Elicitation<T = any> =
  | { action: 'accept'; value: T; by: Approver }
  | { action: 'decline'; reason?: string; by: Approver }
  | { action: 'cancel'; reason: string }

export interface ElicitOptions {
  /** Milliseconds to wait for an answer before it ends as `cancel`. @default the permission service's ask timeout */
  timeout?: number
  /** Withdraws the question (it ends as `cancel`): an imported server that gave up asking. The call's own signal always does. */
  signal?: AbortSignal
}

/** Severity of `call.log`, as MCP (and syslog) order them, lowest first. */
export type LogLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency'

/** Every `LogLevel`, lowest first. */
export const LOG_LEVELS: readonly LogLevel[] = Object.freeze(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'])
