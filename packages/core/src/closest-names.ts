/** Up to `limit` names closest to `input`, for "did you mean" hints to a model. */
export function closestNames(input: string, names: Iterable<string>, limit = 3): string[] {
  const query = input.toLowerCase()
  const scored: [string, number][] = []
  for (const name of names) {
    const candidate = name.toLowerCase()
    let score = distance(query, candidate)
    // A model often drops or adds a prefix: `search` for `web_search`.
    if (candidate.includes(query) || query.includes(candidate)) score = Math.min(score, 1)
    if (score <= Math.max(2, Math.ceil(candidate.length / 2))) scored.push([name, score])
  }
  scored.sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1))
  return scored.slice(0, limit).map(([name]) => name)
}

function distance(a: string, b: string): number {
  if (a === b) return 0
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
    }
    previous = current
  }
  return previous[b.length]
}
