/** One search result: a tool name and how well it matched. */
export interface SearchHit {
  name: string
  /**
   * The BM25F evidence for the tool, in units of one distinctive word: 1 is about what a
   * word that only this tool has, in its name and description, is worth. It does not
   * depend on query length or on how many tools are indexed, so one threshold can say
   * "no good match" everywhere. A tool the query names exactly gets `EXACT_NAME_BOOST` more.
   */
  score: number
  /** The share of the query's words (stop words and filler aside) the tool has, from 0 to 1. */
  coverage: number
  /**
   * The tool's evidence (without the exact-name boost) as a share of the most this query
   * could get from the tools `accept` lets through: the sum, over the query's words, of the
   * best evidence any of them has for that word. From 0 to 1, whatever the query's length.
   */
  share: number
  /**
   * The query names the tool: exactly, or by holding every word of a name that its
   * description does not use (`weather forecast` for a `weather` tool described in Chinese).
   */
  named: boolean
}

export interface SearchOptions {
  /** At most this many hits. */
  limit: number
  /** Only names this accepts are returned: a toolset's own deferred tools, say. */
  accept?: (name: string) => boolean
  /** Hits scoring below this are left out. @default 0 */
  threshold?: number
}

/** What naming a tool exactly adds to its score: more than most queries' whole evidence. */
export const EXACT_NAME_BOOST = 3

/** Whether a hit of `score` for `name` ranks before `than`: ties go to the name that sorts first. */
export function better(score: number, name: string, than: SearchHit): boolean {
  return score > than.score || (score === than.score && name < than.name)
}
