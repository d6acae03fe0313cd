/**
 * Resolves `true` once `promise` settles (either way), or `false` after `ms` milliseconds,
 * whichever is first. The timer does not hold the process open and is cleared on settling.
 */
export function settledWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const expired = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms)
    ;(timer as { unref?: () => void }).unref?.()
  })
  const settled = promise.then(() => true, () => true)
  return Promise.race([settled, expired]).finally(() => clearTimeout(timer))
}
