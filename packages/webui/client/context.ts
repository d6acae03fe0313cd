import { inject, type InjectionKey, onUnmounted, ref, type Ref } from 'vue'
import type { Transport } from './transport'

export const TRANSPORT: InjectionKey<Transport> = Symbol('dogu transport')

/** The questions waiting, polled once by the console for its badge and its panel alike. */
export const APPROVALS: InjectionKey<Poll<any[]>> = Symbol('dogu approvals')

/** The transport the console was mounted with. */
export function useTransport(): Transport {
  const transport = inject(TRANSPORT)
  if (!transport) throw new Error('Dogu console components need a transport: app.provide(TRANSPORT, transport)')
  return transport
}

/** A polled list and the actions on it. */
export interface Poll<T> {
  data: Ref<T | undefined>
  /** The last failure, of the poll or of an action. */
  error: Ref<string>
  refresh: () => Promise<void>
  /** Sends an action (answer, revoke, …), shows its failure, then polls again; its value, or undefined when it failed. */
  act: <R = unknown>(method: string, payload: unknown) => Promise<R | undefined>
}

/**
 * Loads `method` now and every `interval` ms while the component is mounted; `error`
 * holds the last failure's message.
 */
export function usePoll<T>(method: string, payload: () => unknown = () => ({}), interval = 1000): Poll<T> {
  const transport = useTransport()
  const data = ref<T>()
  const error = ref('')
  let stopped = false
  const refresh = async () => {
    try {
      const value = await transport.send<T>(method, payload())
      if (!stopped) {
        data.value = value
        error.value = ''
      }
    } catch (e) {
      if (!stopped) error.value = e instanceof Error ? e.message : String(e)
    }
  }
  const act = async <R>(action: string, actionPayload: unknown): Promise<R | undefined> => {
    let value: R | undefined
    try {
      value = await transport.send<R>(action, actionPayload)
    } catch (e) {
      error.value = e instanceof Error ? e.message : String(e)
    }
    await refresh()
    return value
  }
  void refresh()
  const timer = setInterval(refresh, interval)
  onUnmounted(() => {
    stopped = true
    clearInterval(timer)
  })
  return { data, error, refresh, act }
}
