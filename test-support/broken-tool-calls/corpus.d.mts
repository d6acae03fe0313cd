export type RepairStepName = 'fence' | 'full-width' | 'quotes' | 'unquoted-keys' | 'trailing-comma' | 'comments' | 'python-literals' | 'double-encoded' | 'closing-brackets'

export interface ArgumentCase {
  id: string
  /** The issue thread the failure mode comes from, `dogu-issue-32`, or `unusual-valid`. */
  source: string
  family: string
  tool: string
  arguments: string
  expect:
    | { args: Record<string, unknown>; steps: RepairStepName[] }
    | { refused: true; why: string }
    | { args: Record<string, unknown>; unchanged: true; why?: string }
}

export interface TextCase {
  id: string
  source: string
  format: 'auto' | 'hermes' | 'qwen' | 'deepseek' | 'mistral' | 'qwen3-coder' | 'glm' | 'kimi' | 'llama'
  text: string
  /** `cutOff`: the format of a call the text ends inside, which must be reported and not extracted. */
  expect: { calls: { name: string; args: Record<string, unknown> }[]; text: string; cutOff?: 'hermes' | 'deepseek' | 'mistral' | 'qwen3-coder' | 'glm' | 'kimi' | 'llama' | 'json' }
  why?: string
}

export interface ToolSpec {
  name: string
  description: string
  args: Record<string, { type: 'string' | 'number' | 'boolean' | 'string[]' | 'object'; required?: boolean; description: string }>
}

export type Verdict = 'repaired' | 'refused' | 'unchanged' | 'steps-differ' | 'wrongly-repaired' | 'wrongly-refused' | 'other'

export interface Judgement<R = any> {
  verdict: Verdict
  detail?: string
  result: R
}

export interface Tally {
  total: Record<Verdict, number>
  families: Record<string, Record<Verdict, number>>
}

export const VERDICTS: readonly Verdict[]
export function toolSpecs(): ToolSpec[]
export function argumentCases(): ArgumentCase[]
export function textCases(): TextCase[]
export function fixtureTools<T>(host: { defineTool: (definition: any) => T; Schema: any }, runs?: Map<string, number>): T[]
export function judgeArgumentCase<R>(toolset: { execute(calls: { id: string; name: string; arguments: string }[]): Promise<R[]> }, entry: ArgumentCase, runs: Map<string, number>): Promise<Judgement<R>>
export function tally(judgements: { entry: ArgumentCase; verdict: Verdict }[]): Tally
export function summaryLine(tally: Tally): string
export function normalizeText(text: string): string
