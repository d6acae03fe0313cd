// A Dogu app for background-killed.spec.ts, run in a child process (bundled by esbuild):
// it moves a call to the background, reports once the task's record is on disk, and then
// runs until it is killed. Argument: the directory for its stores.
import { join } from 'node:path'
import { defineTool, JsonFileTaskStore } from '@dogu/core'
import { Context } from 'cordis'
import { DoguPlugin } from '../src'

const dir = process.argv[2]
const storePath = join(dir, 'tasks.json')
const ctx = new Context()
await ctx.plugin(DoguPlugin, {
  permissions: { storePath: join(dir, 'permissions.json') },
  background: { storePath },
  audit: { storePath: join(dir, 'audit.jsonl') },
})
await ctx.plugin({
  name: 'slow-pack',
  inject: ['tools'],
  apply(ctx: Context) {
    ctx.tools.define(defineTool({
      name: 'slow',
      description: 'Never ends',
      traits: { effect: 'read', timeout: 1 },
      run: () => new Promise<string>(() => {}),
    }))
  },
})
const [result] = await ctx.tools.execute([{ id: 'c1', name: 'slow', arguments: {} }], { session: { id: 's1' } })
// A second store on the same file waits for the write in flight before it reads.
const onDisk = await new JsonFileTaskStore(storePath).load()
process.stdout.write(`${JSON.stringify({ result, onDisk })}\n`)
// Nothing else holds the process open: the handler waits on a promise, not a timer.
setInterval(() => {}, 1 << 30)
