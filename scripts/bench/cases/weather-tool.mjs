// The tool the call benches measure (core.mjs, peers.mjs): a read with three arguments, two
// of them defaulted, and the model's arguments for one call of it.
import Schema from 'schemastery'

export const session = { id: 'bench', userId: 'u1' }
export const args = Schema.object({
  city: Schema.string().required(),
  unit: Schema.union(['c', 'f']).default('c'),
  days: Schema.natural().max(14).default(1),
})
export const handler = async ({ city, unit }) => `${city}: 21°${unit}`
export const payload = '{"city":"Hangzhou","unit":"c","days":3}'
