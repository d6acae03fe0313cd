import type { BackgroundTask } from '@dogu/core'
import { describe, expect, it } from 'vitest'
import { NOTICE_PREFIX, noticeText, TaskNotices } from '../src'

const task = (id: string, session: string, extra: Partial<BackgroundTask> = {}): BackgroundTask =>
  ({ id, tool: 'build', callId: `c-${id}`, session: { id: session }, status: 'succeeded', startedAt: 1, settledAt: 2, ...extra })

describe('TaskNotices', () => {
  it('keeps the settled tasks of its session only, hands each out once, and unsubscribes once', () => {
    const listeners = new Set<(task: BackgroundTask) => void>()
    let unsubscribed = 0
    const notices = new TaskNotices({ session: { id: 's1' }, subscribe: (listener) => { listeners.add(listener); return () => { unsubscribed++; listeners.delete(listener) } } })
    for (const listener of listeners) {
      listener(task('t1', 's1'))
      listener(task('t2', 's2'))
      listener(task('t3', 's1', { status: 'interrupted' }))
    }
    expect(notices.size).toBe(2)
    expect(notices.take().map((item) => item.id)).toEqual(['t1', 't3'])
    expect(notices.take()).toEqual([])
    notices.dispose()
    notices.dispose()
    expect(unsubscribed).toBe(1)
    expect(listeners.size).toBe(0)
  })

  it('words the notice so the model cannot take it for the user, with each task\'s outcome and result', () => {
    expect(noticeText([
      task('t1', 's1', { result: { id: 'c-t1', name: 'build', status: 'ok', content: 'built', durationMs: 5 } }),
      task('t2', 's1', { status: 'failed', result: { id: 'c-t2', name: 'build', status: 'error', content: 'disk full', durationMs: 5 } }),
      task('t3', 's1', { status: 'interrupted' }),
    ])).toBe([
      NOTICE_PREFIX,
      'Background task t1 (build, from call c-t1) finished.',
      'Result: built',
      '',
      'Background task t2 (build, from call c-t2) failed.',
      'Result: Error: disk full',
      '',
      'Background task t3 (build, from call c-t3) was interrupted by a restart; its result is lost.',
    ].join('\n'))
  })
})
