/**
 * The items to keep of `items` (oldest first) when at most `max` may stay: the oldest of
 * those `expendable` says go first, then, only once none of them is left, the oldest of the
 * others. The order of what stays is kept. This is how audit retention keeps the record of an
 * authorized or asked call over any number of calls that nobody authorized.
 */
export function keepNewest<T>(items: readonly T[], max: number, expendable: (item: T) => boolean): T[] {
  const excess = items.length - Math.max(0, Math.floor(max))
  if (excess <= 0) return items.slice()
  let spare = 0
  for (const item of items) if (expendable(item)) spare++
  // Of the excess, the expendable take what they can; the rest comes from the others.
  let dropSpare = Math.min(spare, excess)
  let dropOthers = excess - dropSpare
  const kept: T[] = []
  for (const item of items) {
    if (expendable(item)) {
      if (dropSpare > 0) {
        dropSpare--
        continue
      }
    } else if (dropOthers > 0) {
      dropOthers--
      continue
    }
    kept.push(item)
  }
  return kept
}
