import type Schema from 'schemastery'
import { report, type Run } from './run'

export function lengthCheck(meta: Schema['meta'], noun: string, skipMin = false) {
  const { max = Infinity, min = -Infinity } = meta
  return (length: number, run: Run) => {
    if (length > max) report(run, `expected at most ${max} ${noun}, got ${length}`)
    else if (length < min && !skipMin) report(run, `expected at least ${min} ${noun}, got ${length}`)
  }
}
