import type { EventId, EventStore, StreamId } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'

/** How much one Streamable HTTP session keeps for clients that reconnect. */
export interface SessionEventStoreLimits {
  /** The most events kept; the oldest go first. @default 1000 */
  maxEvents?: number
  /** The most bytes (of their JSON) kept; the oldest go first, the newest event always stays. @default 2 MiB */
  maxBytes?: number
}

interface StoredEvent {
  streamId: StreamId
  seq: number
  message: JSONRPCMessage
  bytes: number
}

/**
 * The events of one Streamable HTTP session's SSE streams (SEP-1699), so that a client whose
 * stream closed (the network, or the server's `sseCloseAfter`) reconnects with `Last-Event-ID`
 * and gets what it missed. In memory, bounded by count and bytes, and dropped with the
 * session: one store per session, so an event id of one session means nothing in another.
 *
 * Event ids are `<stream id>:<sequence>`: a client that comes back after the event it last
 * saw was dropped still gets the stream's later events that are kept.
 */
export class SessionEventStore implements EventStore {
  private events = new Map<EventId, StoredEvent>()
  /** Events kept per stream: a stream none are left of is unknown. */
  private streams = new Map<StreamId, number>()
  private seq = 0
  private bytes = 0
  private maxEvents: number
  private maxBytes: number

  constructor(limits: SessionEventStoreLimits = {}) {
    this.maxEvents = Math.max(1, limits.maxEvents ?? 1000)
    this.maxBytes = Math.max(1, limits.maxBytes ?? 2 * 1024 * 1024)
  }

  /** Events kept. */
  get size(): number {
    return this.events.size
  }

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const seq = ++this.seq
    const id = `${streamId}:${seq}`
    const bytes = Buffer.byteLength(JSON.stringify(message))
    this.events.set(id, { streamId, seq, message, bytes })
    this.streams.set(streamId, (this.streams.get(streamId) ?? 0) + 1)
    this.bytes += bytes
    this.trim()
    return id
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    return this.parse(eventId)?.streamId
  }

  async replayEventsAfter(lastEventId: EventId, { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> }): Promise<StreamId> {
    const last = this.parse(lastEventId)
    if (!last) throw new Error(`unknown event id ${JSON.stringify(lastEventId)}`)
    for (const [id, event] of [...this.events]) {
      // A priming event (`{}`, no message) only gave the client its cursor.
      if (event.streamId !== last.streamId || event.seq <= last.seq || !('jsonrpc' in event.message)) continue
      await send(id, event.message)
    }
    return last.streamId
  }

  /** Forgets everything (the session closed). */
  clear(): void {
    this.events.clear()
    this.streams.clear()
    this.bytes = 0
  }

  private parse(eventId: EventId): { streamId: StreamId; seq: number } | undefined {
    const at = eventId.lastIndexOf(':')
    if (at <= 0) return undefined
    const streamId = eventId.slice(0, at)
    const seq = Number(eventId.slice(at + 1))
    if (!Number.isSafeInteger(seq) || seq < 1 || seq > this.seq || !this.streams.has(streamId)) return undefined
    return { streamId, seq }
  }

  private trim() {
    while (this.events.size > 1 && (this.events.size > this.maxEvents || this.bytes > this.maxBytes)) {
      const [id, oldest] = this.events.entries().next().value as [EventId, StoredEvent]
      this.events.delete(id)
      this.bytes -= oldest.bytes
      const left = this.streams.get(oldest.streamId)! - 1
      if (left) this.streams.set(oldest.streamId, left)
      else this.streams.delete(oldest.streamId)
    }
  }
}
