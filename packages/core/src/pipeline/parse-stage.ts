import { closestNames } from '../closest-names'
import { ArgumentsProblem, decodeArguments, parseArguments } from '../parse-arguments'
import { maskRepairRecord } from '../repair/mask-repaired-text'
import { repairArguments } from '../repair/repair-arguments'
import type { RepairRecord } from '../repair/repair-step'
import type { ModelToolCall } from '../tool-call'
import type { ToolEntry } from '../tool-entry'
import type { ArgumentsRefusal, ResultParamsByCode } from '../result-params'
import type { ToolResult } from '../tool-result'
import type { PipelineShared } from './pipeline-host'
import type { SettleStage } from './settle-stage'

/** A model's call with its tool found and its arguments parsed, not yet validated. */
export interface ParsedCall {
  id: string
  entry: ToolEntry
  /** The arguments as parsed (repaired, decoded): what the validator checks. */
  value: unknown
  repaired?: RepairRecord
}

/** Why a call cannot run as the model sent it: what `reject` ends it with. */
export interface ParseRefusal {
  id: string
  name: unknown
  refused: 'unknown_tool' | 'invalid_arguments'
  params: ResultParamsByCode['unknown_tool'] | ArgumentsRefusal
  entry?: ToolEntry
  repaired?: RepairRecord
}

let callCounter = 0

/**
 * Resolve and parse: finds the tool by name and parses the model's arguments, repairing
 * malformed JSON when `repair` is on and decoding the fields the dialect sends JSON-encoded.
 * Ends the call (an `unknown_tool` or `invalid_arguments` result) when it cannot go on.
 */
export class ParseStage {
  constructor(private shared: PipelineShared, private settle: SettleStage) {}

  enter(input: ModelToolCall): ParsedCall | ToolResult {
    const read = this.read(input)
    if (!('refused' in read)) return read
    const { id, name, refused, params, entry, repaired } = read
    return this.settle.reject(id, name, refused, params as never, entry, repaired)
  }

  /**
   * Resolves and parses without ending anything: the parsed call, or why it cannot run.
   * `enter` ends the call with that; `CallPipeline.decide` only reads it.
   */
  read(input: ModelToolCall): ParsedCall | ParseRefusal {
    const id = typeof input?.id === 'string' && input.id ? input.id : `call_${++callCounter}`
    const name = input?.name
    const entry = typeof name === 'string' ? this.shared.entries.get(name) : undefined
    if (!entry) return { id, name, refused: 'unknown_tool', params: this.unknownParams(name) }
    const { maxArgumentsLength } = this.shared.limits
    let parsed = parseArguments(input.arguments, maxArgumentsLength)
    let repaired: RepairRecord | undefined
    if (parsed instanceof ArgumentsProblem) {
      // Text that did not parse may hold a secret anywhere: V8's excerpt of it is not quoted.
      const problem = entry.secrets ? parsed.withoutSecrets() : parsed.refusal
      if (!parsed.repairable || !this.shared.host.repair) return invalid(id, name!, entry, problem)
      const text = input.arguments as string
      const fixed = repairArguments(text)
      if ('error' in fixed) return invalid(id, name!, entry, { ...problem, unrepairable: fixed.error } as ArgumentsRefusal)
      // The model's text, shown to askers, events and logs, with the secret fields' values masked.
      repaired = maskRepairRecord(fixed.repaired, text, [fixed.value], entry.secrets)
      // The repaired text goes through the same checks (forbidden keys, an object) as any.
      const strict = parseArguments(fixed.json, maxArgumentsLength)
      if (strict instanceof ArgumentsProblem) return invalid(id, name!, entry, strict.refusal, repaired)
      parsed = strict
    }
    const encoded = this.shared.encodedPaths(entry)
    if (encoded.length) {
      const decoded = decodeArguments(parsed, encoded)
      if (decoded instanceof ArgumentsProblem) return invalid(id, name!, entry, entry.secrets ? decoded.withoutSecrets() : decoded.refusal, repaired)
      // A secret inside a field the dialect sends JSON-encoded is found once decoded.
      if (repaired && entry.secrets) repaired = maskRepairRecord(repaired, input.arguments as string, [parsed, decoded], entry.secrets)
      parsed = decoded
    }
    return repaired ? { id, entry, value: parsed, repaired } : { id, entry, value: parsed }
  }

  private unknownParams(name: unknown): ResultParamsByCode['unknown_tool'] {
    if (typeof name !== 'string' || !name) return { suggestions: [], available: [], more: false }
    const { entries } = this.shared
    return { name, suggestions: closestNames(name, entries.keys()), available: [...entries.keys()].slice(0, 20), more: entries.size > 20 }
  }
}

/** An `invalid_arguments` refusal (a function, so the call that parses allocates no closure). */
function invalid(id: string, name: string, entry: ToolEntry, params: ArgumentsRefusal, repaired?: RepairRecord): ParseRefusal {
  return repaired ? { id, name, refused: 'invalid_arguments', params, entry, repaired } : { id, name, refused: 'invalid_arguments', params, entry }
}
