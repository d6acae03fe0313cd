/** A signal's one 'abort' listener and the callbacks it calls. */
interface Fanout {
  callbacks: Set<() => void>
  fire: () => void
}

const fanouts = new WeakMap<AbortSignal, Fanout>()

/**
 * Calls `callback` when `signal` aborts, through one listener per signal however many wait
 * on it: a framework hands one signal to every call of a turn (OpenAI Agents passes its
 * run's signal to each tool, the AI SDK its step's), and Node warns past ten listeners on
 * one signal. Returns the unsubscribe; the listener goes when its last callback does.
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  let fanout = fanouts.get(signal)
  if (!fanout) {
    const callbacks = new Set<() => void>()
    const fire = () => {
      fanouts.delete(signal)
      for (const waiting of [...callbacks]) waiting()
    }
    fanout = { callbacks, fire }
    fanouts.set(signal, fanout)
    signal.addEventListener('abort', fire, { once: true })
  }
  const { callbacks, fire } = fanout
  // A function per subscription, so that one batch's unsubscribe never removes another's.
  const subscription = () => callback()
  callbacks.add(subscription)
  return () => {
    if (!callbacks.delete(subscription) || callbacks.size) return
    signal.removeEventListener('abort', fire)
    if (fanouts.get(signal)?.fire === fire) fanouts.delete(signal)
  }
}
