import type { Capital } from './capitals'

/**
 * Rows matching `query`, best first: an exact match of a name or code beats a prefix,
 * which beats a substring. Ties keep the table's order.
 */
export function findCapitals(table: readonly Capital[], query: string, limit: number): Capital[] {
  const q = normalize(query)
  if (!q) return []
  const scored: { row: Capital; score: number; index: number }[] = []
  table.forEach((row, index) => {
    let score = 0
    for (const key of keysOf(row)) score = Math.max(score, match(normalize(key), q))
    if (score) scored.push({ row, score, index })
  })
  scored.sort((a, b) => b.score - a.score || a.index - b.index)
  return scored.slice(0, limit).map(({ row }) => row)
}

function keysOf(row: Capital): string[] {
  return [row.code, row.country.en, row.country.zh, row.capital.en, row.capital.zh, ...(row.aliases ?? [])]
}

function match(key: string, q: string): number {
  if (key === q) return 3
  if (key.startsWith(q)) return 2
  // Short queries are codes or initials: "de" inside "New Delhi" is noise, not a match.
  if (q.length > 2 && key.includes(q)) return 1
  return 0
}

function normalize(text: string): string {
  // Fold case and accents so "brasilia" finds "Brasília" and "ＦＲ" finds "FR".
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().trim()
}
