import { closed, fromJsonSchema } from '@dogu/schema'
import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { formSchema } from '../client/form-schema'

describe('formSchema', () => {
  it('renders a closed object (an imported additionalProperties: false) that takes its declared keys and refuses others', () => {
    const imported = fromJsonSchema({ type: 'object', properties: { a: { type: 'string', maxLength: 3 } }, additionalProperties: false })
    for (const given of [imported, closed(Schema.object({ a: Schema.string().max(3) }))]) {
      const form = formSchema(given.toJSON())
      // The display schema drops bounds so boxes keep what is typed, but not the key rule.
      expect(form.display({ a: 'xxxxx' })).toEqual({ a: 'xxxxx' })
      expect(() => form.display({ a: 'x', b: 1 })).toThrow()
      expect(form.validate({ a: 'xxxxx' }).map((issue) => issue.path)).toEqual(['$.a'])
      expect(form.validate({ a: 'x', b: 1 }).map((issue) => issue.path)).toEqual(['$.b'])
    }
  })
})
