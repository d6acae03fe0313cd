// The signature hosts and the corpus runner call, exactly: the arguments stay a string.
import { describe, expectTypeOf, it } from 'vitest'
import { type CutOffTextToolCall, type Endpoint, extractTextToolCalls, type TextToolCallFormat } from '../src'

describe('extractTextToolCalls', () => {
  it('takes text, a format and the turn\'s tools, and returns the calls with string arguments, the text left, and a cut-off call', () => {
    expectTypeOf(extractTextToolCalls).toEqualTypeOf<(
      text: string,
      format: TextToolCallFormat,
      options?: { tools?: Iterable<{ name: string; parameters?: { readonly [keyword: string]: unknown } }> },
    ) => { calls: { id: string; name: string; arguments: string }[]; text: string; cutOff?: CutOffTextToolCall }>()
    expectTypeOf<TextToolCallFormat>().toEqualTypeOf<'auto' | 'hermes' | 'qwen' | 'deepseek' | 'mistral' | 'qwen3-coder' | 'glm' | 'kimi' | 'llama'>()
    expectTypeOf<CutOffTextToolCall['format']>().toEqualTypeOf<'hermes' | 'deepseek' | 'mistral' | 'qwen3-coder' | 'glm' | 'kimi' | 'llama' | 'json'>()
  })

  it('takes the OpenAI definitions a toolset gives as its tools', () => {
    expectTypeOf<{ name: string; description: string; parameters: { [keyword: string]: unknown }; strict: boolean }>().toMatchTypeOf<NonNullable<Parameters<typeof extractTextToolCalls>[2]>['tools'] extends Iterable<infer T> | undefined ? T : never>()
  })

  it('is set on the endpoint, with `off`', () => {
    expectTypeOf<Endpoint['textToolCalls']>().toEqualTypeOf<'auto' | 'hermes' | 'qwen' | 'deepseek' | 'mistral' | 'qwen3-coder' | 'glm' | 'kimi' | 'llama' | 'off' | undefined>()
  })
})
