// The signature hosts and the corpus runner call, exactly: the arguments stay a string.
import { describe, expectTypeOf, it } from 'vitest'
import { type Endpoint, extractTextToolCalls, type TextToolCallFormat } from '../src'

describe('extractTextToolCalls', () => {
  it('takes text and a format, and returns the calls with string arguments and the text left', () => {
    expectTypeOf(extractTextToolCalls).toEqualTypeOf<(text: string, format: TextToolCallFormat) => { calls: { id: string; name: string; arguments: string }[]; text: string }>()
    expectTypeOf<TextToolCallFormat>().toEqualTypeOf<'auto' | 'hermes' | 'qwen' | 'deepseek' | 'mistral'>()
  })

  it('is set on the endpoint, with `off`', () => {
    expectTypeOf<Endpoint['textToolCalls']>().toEqualTypeOf<'auto' | 'hermes' | 'qwen' | 'deepseek' | 'mistral' | 'off' | undefined>()
  })
})
