import { NAME } from '../call-envelope'
import type { Found, FoundCall, MarkupReader } from './markup-reader'
import { unfenced } from './unfenced'

// DeepSeek's tokens are `<｜tool▁calls▁begin｜>` (U+FF5C, U+2581); servers that detokenize
// loosely, and models that copy them from text, write `|` and `_` instead.
const BEGIN = /<[|｜]tool[▁_]calls?[▁_]begin[|｜]>/y
const CALL_BEGIN = /<[|｜]tool[▁_]call[▁_]begin[|｜]>/g
const CALL_END = /<[|｜]tool[▁_]call[▁_]end[|｜]>/g
const CALLS_END = /<[|｜]tool[▁_]calls[▁_]end[|｜]>/g
const SEP = /<[|｜]tool[▁_]sep[|｜]>/
/** The marker, for the scan of the whole text. */
export const DEEPSEEK_MARKER = /<[|｜]tool[▁_]calls?[▁_]begin[|｜]>/

export const deepseek: MarkupReader = {
  starts: (text, at) => {
    BEGIN.lastIndex = at
    return BEGIN.test(text)
  },
  read: readDeepSeek,
}

/** `<｜tool▁calls▁begin｜>` and its calls, to `<｜tool▁calls▁end｜>` or the end of the text. */
function readDeepSeek(text: string, at: number): Found | undefined {
  CALLS_END.lastIndex = at
  const closing = CALLS_END.exec(text)
  const bodyEnd = closing ? closing.index : text.length
  const end = closing ? closing.index + closing[0].length : text.length
  const body = text.slice(at, bodyEnd)
  const calls: FoundCall[] = []
  CALL_BEGIN.lastIndex = 0
  const begins = [...body.matchAll(CALL_BEGIN)]
  for (const [i, begin] of begins.entries()) {
    const start = begin.index + begin[0].length
    const next = begins[i + 1]?.index ?? body.length
    CALL_END.lastIndex = start
    const close = CALL_END.exec(body)
    const inner = body.slice(start, close && close.index < next ? close.index : next)
    const sep = SEP.exec(inner)
    if (!sep) return undefined
    const before = inner.slice(0, sep.index).trim()
    const after = inner.slice(sep.index + sep[0].length)
    let name: string
    let args: string
    if (before === 'function') {
      // V3 and R1: the type, then the name on the separator's line, then the fenced arguments.
      const newline = after.indexOf('\n')
      name = (newline < 0 ? after : after.slice(0, newline)).trim()
      args = newline < 0 ? '' : unfenced(after.slice(newline + 1))
    } else {
      // V3.1: the name, then the arguments as they are.
      name = before
      args = after.trim()
    }
    if (!NAME.test(name)) return undefined
    calls.push({ name, arguments: args || '{}' })
  }
  return calls.length ? { end, calls } : undefined
}
