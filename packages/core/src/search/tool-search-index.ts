import type { Tool } from '../tool'
import { DEFAULT_FIELD_B, DEFAULT_FIELD_WEIGHTS, F, FIELDS, type FieldWeights, fieldNorms, type Postings, saturate } from './bm25f'
import { NamedTools } from './named-tools'
import { type SearchDocument, searchFields } from './search-document'
import { better, EXACT_NAME_BOOST, type SearchHit, type SearchOptions } from './search-hit'
import { documentTerms, queryWords, tokenize } from './tokenize'

export { DEFAULT_FIELD_B, DEFAULT_FIELD_WEIGHTS, type FieldWeights } from './bm25f'
export { EXACT_NAME_BOOST, type SearchHit, type SearchOptions } from './search-hit'

export interface ToolSearchIndexOptions {
  /** How much a term counts in each field. */
  weights?: Partial<FieldWeights>
  /** Length normalisation per field (BM25's b). */
  b?: Partial<FieldWeights>
  /** Term-frequency saturation (BM25's k1). @default 1.2 */
  k1?: number
}

/** Han, kana and hangul. */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u

/** The name terms of a tool whose description uses them: shared, most tools have it. */
const NO_NAME_TERMS: readonly string[] = Object.freeze([])

/** A term's postings with the term itself, so slots can hold the one string the map keys on. */
interface TermPostings extends Postings {
  term: string
}

/**
 * An incremental inverted index over tool names, descriptions and parameters, ranked by
 * BM25F with a boost for a tool the query names exactly. `add` and `remove` touch only
 * that tool's terms; nothing is rebuilt per query.
 *
 * @example
 * const index = new ToolSearchIndex()
 * index.add(weatherTool)
 * index.search('weather forecast for Oslo', { limit: 5 }) // [{ name: 'get_weather', score: 1.5, coverage: 0.75, share: 1, named: false }]
 */
export class ToolSearchIndex {
  private readonly weights: Float64Array
  private readonly b: Float64Array
  private readonly k1: number
  private readonly bySlot: (string | undefined)[] = []
  /** Per slot, its distinct terms: the strings the postings map keys on, not copies. */
  private readonly termsBySlot: (readonly string[] | undefined)[] = []
  private readonly nameTermsBySlot: (readonly string[] | undefined)[] = []
  /** Slots whose description is written in another script than their name (Chinese and Latin). */
  private readonly foreignDescription = new Set<number>()
  private readonly free: number[] = []
  private readonly slots = new Map<string, number>()
  private readonly names = new NamedTools()
  private readonly postings = new Map<string, TermPostings>()
  private readonly totals = new Float64Array(F)
  private lengths: Float64Array = new Float64Array(F * 64)
  /** Per slot and field: weight / BM25 length norm. Recomputed on the first search after a change. */
  private norms: Float64Array = new Float64Array(0)
  private normsValid = false
  /** Bumped on every change: cached per-term figures of older versions are stale. */
  private version = 0
  private scores: Float64Array = new Float64Array(64)
  /** Per slot, the best term of the query word being scored. */
  private best: Float64Array = new Float64Array(64)
  private inGroup: number[] = []
  /** Per slot, how many characters of a fall-back word the tool has. */
  private charsHad: Float64Array = new Float64Array(64)
  private touched: number[] = []
  /** Per slot, during a search with `accept`: 0 not asked yet, 1 accepted, 2 not. */
  private accepted: Uint8Array = new Uint8Array(64)
  private asked: number[] = []

  constructor(options: ToolSearchIndexOptions = {}) {
    const weights = { ...DEFAULT_FIELD_WEIGHTS, ...options.weights }
    const b = { ...DEFAULT_FIELD_B, ...options.b }
    this.weights = Float64Array.from(FIELDS, (field) => weights[field])
    this.b = Float64Array.from(FIELDS, (field) => b[field])
    this.k1 = options.k1 ?? 1.2
  }

  /** How many tools are indexed. */
  get size(): number {
    return this.slots.size
  }

  has(name: string): boolean {
    return this.slots.has(name)
  }

  /** Indexes a tool, or a `{ name, description, parameters }` record; a known name is replaced. */
  add(source: Tool | SearchDocument): void {
    const fields = searchFields(source)
    const { name } = fields
    this.remove(name)
    const slot = this.free.pop() ?? this.bySlot.length
    this.bySlot[slot] = name
    this.slots.set(name, slot)
    if (this.lengths.length < (slot + 1) * F) this.lengths = grow(this.lengths, (slot + 1) * F)
    const counts = new Map<string, Float64Array>()
    for (let f = 0; f < F; f++) {
      // Characters are postings for the fall-back only: they do not make a field longer.
      const { terms, chars } = documentTerms(fields[FIELDS[f]])
      this.lengths[slot * F + f] = terms.length
      this.totals[f] += terms.length
      for (const term of terms.concat(chars)) {
        let tf = counts.get(term)
        if (!tf) counts.set(term, tf = new Float64Array(F))
        tf[f]++
      }
    }
    const own: string[] = []
    for (const [term, tf] of counts) {
      let postings = this.postings.get(term)
      if (!postings) this.postings.set(term, postings = { term, slots: [], tf: [] })
      postings.slots.push(slot)
      for (let f = 0; f < F; f++) postings.tf.push(tf[f])
      own.push(postings.term)
    }
    this.termsBySlot[slot] = own
    // Holding a name's words names the tool only when its description does not use them (a
    // name in another language): elsewhere they are ordinary words the score already weighs.
    const nameTerms = [...new Set(tokenize(name))]
    const described = new Set(tokenize(`${fields.description} ${fields.parameterText}`))
    this.nameTermsBySlot[slot] = !nameTerms.length || nameTerms.some((term) => described.has(term)) ? NO_NAME_TERMS : nameTerms
    if (CJK.test(fields.description) && !CJK.test(name)) this.foreignDescription.add(slot)
    this.changed()
    this.names.add(name)
  }

  /** Forgets a tool; returns whether it was indexed. */
  remove(name: string): boolean {
    const slot = this.slots.get(name)
    if (slot === undefined) return false
    this.slots.delete(name)
    for (const term of this.termsBySlot[slot]!) {
      const postings = this.postings.get(term)!
      const at = postings.slots.indexOf(slot)
      const last = postings.slots.length - 1
      // Swap with the last posting: order inside a posting list does not matter.
      postings.slots[at] = postings.slots[last]
      postings.slots.pop()
      for (let f = 0; f < F; f++) postings.tf[at * F + f] = postings.tf[last * F + f]
      postings.tf.length = last * F
      if (!last) this.postings.delete(term)
    }
    for (let f = 0; f < F; f++) {
      this.totals[f] -= this.lengths[slot * F + f]
      this.lengths[slot * F + f] = 0
    }
    this.names.remove(name)
    this.bySlot[slot] = this.termsBySlot[slot] = this.nameTermsBySlot[slot] = undefined
    this.foreignDescription.delete(slot)
    this.free.push(slot)
    this.changed()
    return true
  }

  /** The best matches for `query`, best first; ties go to the name that sorts first. */
  search(query: string, options: SearchOptions): SearchHit[] {
    const limit = Math.max(0, Math.floor(options.limit))
    const { accept } = options
    const threshold = options.threshold ?? 0
    const n = this.slots.size
    if (!limit || !n || typeof query !== 'string') return []
    if (this.scores.length < this.bySlot.length) {
      this.scores = new Float64Array(this.bySlot.length * 2)
      this.best = new Float64Array(this.bySlot.length * 2)
      this.charsHad = new Float64Array(this.bySlot.length * 2)
      this.accepted = new Uint8Array(this.bySlot.length * 2)
    }
    const { scores, touched } = this

    const groups = queryWords(query)
    const { best, inGroup, accepted, asked } = this
    // The most evidence any accepted tool has, summed over the query's words.
    let attainable = 0
    // A word's evidence is its best-matching term: a Chinese word with its bigrams counts as
    // one word, as an English word does, so scores mean the same in both languages. A word
    // no tool has (`翻成`) falls back on its characters (`翻`, `成`), and then only a tool
    // with every one of them counts: one shared character is mostly chance.
    const matchedBy = groups.map((word): MatchedBy => {
      let known = false
      for (const term of word.terms) known = this.addEvidence(term, n) || known
      let byChars = false
      if (!known && word.chars.length) {
        const { charsHad } = this
        for (const char of word.chars) this.addEvidence(char, n, charsHad)
        for (const slot of inGroup) {
          if (charsHad[slot] < word.chars.length) best[slot] = 0
          else byChars = true
          charsHad[slot] = 0
        }
      }
      let most = 0
      for (const slot of inGroup) {
        if (best[slot] === 0) continue
        if (best[slot] > most) {
          if (accept && !accepted[slot]) {
            accepted[slot] = accept(this.bySlot[slot]!) ? 1 : 2
            asked.push(slot)
          }
          if (!accept || accepted[slot] === 1) most = best[slot]
        }
        if (scores[slot] === 0) touched.push(slot)
        scores[slot] += best[slot]
        best[slot] = 0
      }
      inGroup.length = 0
      attainable += most
      return known ? 'terms' : byChars ? 'chars' : 'none'
    })
    const exact = this.names.namedIn(query)
    const queryTerms = new Set(groups.flatMap((word) => word.terms))
    const hits: SearchHit[] = []
    const consider = (name: string, score: number) => {
      if (score < threshold || (hits.length === limit && !better(score, name, hits[limit - 1]))) return
      if (accept && !accept(name)) return
      let at = hits.length
      while (at > 0 && better(score, name, hits[at - 1])) at--
      hits.splice(at, 0, { name, score, coverage: 0, share: 0, named: false })
      if (hits.length > limit) hits.pop()
    }
    // The IDF of a word only one tool has: the unit of `score`.
    const scale = 1 / Math.log(1 + (n - 0.5) / 1.5)
    for (const slot of touched) {
      const name = this.bySlot[slot]!
      consider(name, scores[slot] * scale + (exact?.has(name) ? EXACT_NAME_BOOST : 0))
      scores[slot] = 0
    }
    touched.length = 0
    for (const slot of asked) accepted[slot] = 0
    asked.length = 0
    // A tool named exactly but sharing no term with the query (a single-letter name).
    if (exact) for (const name of exact) if (!hits.some((hit) => hit.name === name)) consider(name, EXACT_NAME_BOOST)
    for (const hit of hits) {
      const slot = this.slots.get(hit.name)!
      hit.named = !!exact?.has(hit.name) || this.hasNameWords(slot, queryTerms)
      const evidence = hit.score - (exact?.has(hit.name) ? EXACT_NAME_BOOST : 0)
      hit.share = attainable > 0 ? Math.min(1, evidence / (attainable * scale)) : 0
      const own = this.termsBySlot[slot]!
      let shared = 0
      groups.forEach((word, i) => {
        if (matchedBy[i] === 'terms' ? word.terms.some((term) => own.includes(term)) : matchedBy[i] === 'chars' && word.chars.every((char) => own.includes(char))) shared++
      })
      hit.coverage = groups.length ? shared / groups.length : 0
    }
    return hits
  }

  /**
   * Raises each tool's best evidence for the current query word to this term's, counting
   * in `had` the tools that have it; false when no tool has the term.
   */
  private addEvidence(term: string, n: number, had?: Float64Array): boolean {
    const postings = this.postings.get(term)
    // Words no tool has ("Hangzhou", "42") carry no evidence either way.
    if (!postings) return false
    const { best, inGroup } = this
    const { slots } = postings
    const idf = Math.log(1 + (n - slots.length + 0.5) / (slots.length + 0.5))
    const saturated = saturate(postings, this.updateNorms(), this.k1, this.version)
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]
      const value = idf * saturated[i]
      if (had) had[slot]++
      if (best[slot] === 0) inGroup.push(slot)
      if (value > best[slot]) best[slot] = value
    }
    return true
  }

  private hasNameWords(slot: number, queryTerms: Set<string>): boolean {
    const words = this.nameTermsBySlot[slot]!
    return words.length > 0 && words.every((word) => queryTerms.has(word))
  }

  private changed() {
    this.version++
    this.normsValid = false
  }

  private updateNorms(): Float64Array {
    if (this.normsValid) return this.norms
    this.norms = fieldNorms(this.norms, { lengths: this.lengths, totals: this.totals, slotCount: this.bySlot.length, size: this.slots.size, foreignDescription: this.foreignDescription }, this.weights, this.b)
    this.normsValid = true
    return this.norms
  }
}

/** How a query word met the index: by its terms, by all its characters, or not at all. */
type MatchedBy = 'terms' | 'chars' | 'none'

function grow(array: Float64Array, size: number): Float64Array {
  const next = new Float64Array(Math.max(size, array.length * 2))
  next.set(array)
  return next
}
