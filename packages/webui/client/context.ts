import { computed, inject, type InjectionKey, onUnmounted, ref, type Ref, shallowRef } from 'vue'
import { useErrorText } from './error-text'
import { type Transport, TransportError } from './transport'

export const TRANSPORT: InjectionKey<Transport> = Symbol('dogu transport')

/**
 * How the host lets a person log in, when it has a login (Koishi's console with
 * @koishijs/plugin-auth: its login page): offered beside a `LOGIN` refusal.
 */
export const LOGIN: InjectionKey<() => void> = Symbol('dogu login')

/**
 * The host chooses the page's language with a setting of its own (Koishi's console): the
 * page shows no language switch, which the host's setting would not follow.
 */
export const HOST_LOCALE: InjectionKey<true> = Symbol('dogu host locale')

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
  /** The last failure, of the poll or of an action, in the page's language (`useErrorText`); empty when none. */
  error: Readonly<Ref<string>>
  /** The last failure's code (`TransportError.code`: `LOGIN`, `NOT_FOUND`, …), when it had one. */
  errorCode: Readonly<Ref<string | undefined>>
  refresh: () => Promise<void>
  /** Sends an action (answer, revoke, …), shows its failure, then polls again; its value, or undefined when it failed. */
  act: <R = unknown>(method: string, payload: unknown) => Promise<R | undefined>
}

/**
 * Loads `method` now and every `interval` ms while the component is mounted; `error`
 * says the last failure (worded again when the page's language changes).
 */
export function usePoll<T>(method: string, payload: () => unknown = () => ({}), interval = 1000): Poll<T> {
  const transport = useTransport()
  const errorText = useErrorText()
  const data = ref<T>()
  const failure = shallowRef<{ error: unknown }>()
  const error = computed(() => failure.value ? errorText(failure.value.error) : '')
  const errorCode = computed(() => failure.value?.error instanceof TransportError ? failure.value.error.code : undefined)
  let stopped = false
  const refresh = async () => {
    try {
      const value = await transport.send<T>(method, payload())
      if (!stopped) {
        data.value = value
        failure.value = undefined
      }
    } catch (e) {
      if (!stopped) failure.value = { error: e }
    }
  }
  const act = async <R>(action: string, actionPayload: unknown): Promise<R | undefined> => {
    let value: R | undefined
    try {
      value = await transport.send<R>(action, actionPayload)
    } catch (e) {
      failure.value = { error: e }
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
  return { data, error, errorCode, refresh, act }
}
