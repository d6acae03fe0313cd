// The soak workload that packages/core/tests/soak.spec.ts checks (one result per call, no
// call or listener kept) and `yarn bench soak` measures the heap over. Each batch's outcome
// is fixed by ordering, not by timing: the hanging calls start only after the exclusive
// timing-out call has ended, and the batch is cancelled once both hangs are running.

/**
 * Defines the workload's five tools on `registry` (from core's sources or its build, hence
 * `defineTool` and `Schema` passed in) and returns its batches.
 */
export function soakWorkload({ registry, defineTool, Schema, session = { id: 'soak' } }) {
  let hanging = 0
  let bothHanging = () => {}
  const args = Schema.object({ n: Schema.natural().default(0) })
  registry.define(defineTool({ name: 'read_ok', description: '', args, traits: { effect: 'read' }, run: ({ n }) => `r${n}` }))
  registry.define(defineTool({ name: 'write_ok', description: '', args, traits: { effect: 'write' }, run: async ({ n }) => ({ text: `w${n}`, data: { n } }) }))
  registry.define(defineTool({ name: 'fails', description: '', args, traits: { effect: 'read' }, run: async () => { throw new Error('nope') } }))
  registry.define(defineTool({ name: 'too_slow', description: '', args, traits: { effect: 'exec', timeout: 1, background: false }, run: () => new Promise(() => {}) }))
  registry.define(defineTool({
    name: 'hangs',
    description: '',
    args,
    traits: { effect: 'read' },
    // Ignores its signal on purpose: the pipeline must still end the call.
    run: () => new Promise(() => { if (++hanging % 2 === 0) bothHanging() }),
  }))

  const batch = (i) => [
    { id: `${i}-0`, name: 'read_ok', arguments: `{"n":${i}}` },
    { id: `${i}-1`, name: 'write_ok', arguments: { n: i } },
    { id: `${i}-2`, name: 'fails', arguments: '{}' },
    { id: `${i}-3`, name: 'read_ok', arguments: '{"n":"bad"}' },
    { id: `${i}-4`, name: 'too_slow', arguments: '{}' },
    { id: `${i}-5`, name: 'hangs', arguments: '{}' },
    { id: `${i}-6`, name: 'hangs', arguments: '{}' },
    { id: `${i}-7`, name: 'missing', arguments: '{}' },
  ]

  /** Runs batch `i` in a new toolset, cancelled once both hanging calls are running. */
  const runBatch = async (i) => {
    const controller = new AbortController()
    const started = new Promise((resolve) => { bothHanging = resolve })
    const pending = registry.toolset({ session }).execute(batch(i), { signal: controller.signal })
    await started
    controller.abort()
    return pending
  }

  return {
    batch,
    /** Each batch's statuses, in call order. */
    expected: ['ok', 'ok', 'error', 'error', 'timed_out', 'cancelled', 'cancelled', 'error'],
    runBatch,
  }
}
