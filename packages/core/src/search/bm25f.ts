import type { SearchFields } from './search-document'

/** A number per indexed field. */
export type FieldWeights = Record<keyof SearchFields, number>

export const FIELDS = ['name', 'description', 'parameterNames', 'parameterText'] as const
/** How many fields each slot has figures for. */
export const F = FIELDS.length
const NAME = FIELDS.indexOf('name')
const DESCRIPTION = FIELDS.indexOf('description')

/**
 * Chosen by a grid search on the tuning queries (Seal-Tools dev, even-numbered BFCL and
 * MetaTool queries); the optimum is flat: every setting within 0.005 of mean Recall@5.
 */
export const DEFAULT_FIELD_WEIGHTS: Readonly<FieldWeights> = Object.freeze({
  name: 2,
  description: 1,
  parameterNames: 0.6,
  parameterText: 0.5,
})

/** Names are short and their length says little; descriptions are normalised fully. */
export const DEFAULT_FIELD_B: Readonly<FieldWeights> = Object.freeze({
  name: 0.4,
  description: 0.75,
  parameterNames: 0.5,
  parameterText: 0.75,
})

/** The documents that hold one term, with the term's frequency in each field. */
export interface Postings {
  slots: number[]
  /** `F` numbers per slot, in `FIELDS` order. */
  tf: number[]
  /** Each slot's saturated BM25F term frequency, valid while `version` is the index's. */
  saturated?: Float64Array
  version?: number
}

/**
 * BM25F per slot: field frequencies, each weighted and length-normalised, saturate
 * together. Depends only on the index, so it is computed once per term and version:
 * repeated searches cost one multiply-add per posting.
 */
export function saturate(postings: Postings, norms: Float64Array, k1: number, version: number): Float64Array {
  if (postings.version === version) return postings.saturated!
  const { slots, tf } = postings
  const saturated = postings.saturated?.length === slots.length ? postings.saturated : new Float64Array(slots.length)
  for (let i = 0; i < slots.length; i++) {
    let weighted = 0
    for (let f = 0, at = slots[i] * F, j = i * F; f < F; f++) weighted += tf[j + f] * norms[at + f]
    saturated[i] = weighted / (k1 + weighted)
  }
  postings.saturated = saturated
  postings.version = version
  return saturated
}

/** What `fieldNorms` reads: the index's field lengths per slot and their totals. */
export interface FieldLengths {
  lengths: Float64Array
  totals: Float64Array
  /** How many slots there are, free ones included. */
  slotCount: number
  /** How many tools are indexed. */
  size: number
  /** Slots whose description is written in another script than their name. */
  foreignDescription: ReadonlySet<number>
}

/** Per slot and field: weight / BM25 length norm, written into `norms` (grown when short). */
export function fieldNorms(norms: Float64Array, { lengths, totals, slotCount, size: n, foreignDescription }: FieldLengths, weights: Float64Array, b: Float64Array): Float64Array {
  const size = slotCount * F
  if (norms.length < size) norms = new Float64Array(lengths.length)
  for (let f = 0; f < F; f++) {
    const average = totals[f] / n || 1
    for (let at = f; at < size; at += F) norms[at] = weights[f] / (1 - b[f] + b[f] * lengths[at] / average)
  }
  // A description in another script than the name stands in for the name as well: a
  // Chinese query can only meet the Chinese description of `weather`, so there it weighs
  // as name and description together, as an English query's words do on English tools.
  const standIn = (weights[NAME] + weights[DESCRIPTION]) / weights[DESCRIPTION]
  for (const slot of foreignDescription) norms[slot * F + DESCRIPTION] *= standIn
  return norms
}
