import type Schema from 'schemastery'
import { report, type Run } from './run'
import { shown } from './values'

export function lengthCheck(meta: Schema['meta'], unit: 'characters' | 'items', skipMin = false) {
  const { max = Infinity, min = -Infinity } = meta
  return (length: number, run: Run) => {
    if (length > max) report(run, { kind: 'max_length', params: { limit: max, got: shown(length), unit } })
    else if (length < min && !skipMin) report(run, { kind: 'min_length', params: { limit: min, got: shown(length), unit } })
  }
}
