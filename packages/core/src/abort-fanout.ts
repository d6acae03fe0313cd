/** A signal's one 'abort' listener and the callbacks it calls. */
interface Fanout {
  callbacks: Set<() => void>
  fire: () => void
  /** Set while a check whether to take the listener off is scheduled. */
  sweeping: boolean
}

const fanouts = new WeakMap<AbortSignal, Fanout>()

/**
 * Calls `callback` when `signal` aborts, through one listener per signal however many wait
 * on it: a framework hands one signal to every call of a turn (OpenAI Agents passes its
 * run's signal to each tool), and Node warns past ten listeners on one signal. Returns the
 * unsubscribe. With no callback left the listener comes off at the next turn of the event
 * loop, not at once: a framework's next call with the same signal usually comes sooner, and
 * adding a listener costs more than queueing the call.
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  let fanout = fanouts.get(signal)
  if (!fanout) {
    const callbacks = new Set<() => void>()
    const fire = () => {
      fanouts.delete(signal)
      for (const waiting of [...callbacks]) waiting()
    }
    fanout = { callbacks, fire, sweeping: false }
    fanouts.set(signal, fanout)
    signal.addEventListener('abort', fire, { once: true })
  }
  const current = fanout
  // A function per subscription, so that one batch's unsubscribe never removes another's.
  const subscription = () => callback()
  current.callbacks.add(subscription)
  return () => {
    if (!current.callbacks.delete(subscription) || current.callbacks.size || current.sweeping) return
    current.sweeping = true
    setImmediate(() => sweep(signal, current))
  }
}

/** Takes the listener off a signal nothing waits on any more (see `onAbort`). */
function sweep(signal: AbortSignal, fanout: Fanout): void {
  fanout.sweeping = false
  if (fanout.callbacks.size || fanouts.get(signal) !== fanout) return
  signal.removeEventListener('abort', fanout.fire)
  fanouts.delete(signal)
}
