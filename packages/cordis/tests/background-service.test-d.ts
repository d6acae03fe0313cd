import type { BackgroundTask } from '@dogu/core'
import type { Context } from 'cordis'
import { expectTypeOf, test } from 'vitest'
import type { BackgroundService } from '../src/background-service'

test('ctx.background and its event are typed', () => {
  const check = (ctx: Context) => {
    expectTypeOf(ctx.background).toEqualTypeOf<BackgroundService>()
    ctx.on('background/settled', (task) => {
      expectTypeOf(task).toEqualTypeOf<BackgroundTask>()
      expectTypeOf(task.session.id).toEqualTypeOf<string>()
    })
    expectTypeOf(ctx.background.wait('task_x', { timeout: 1_000 })).resolves.toEqualTypeOf<BackgroundTask | undefined>()
  }
  expectTypeOf(check).toBeFunction()
})
