// The chat's durations (format-duration.ts): a time left before a deadline reads as a person
// would say it, never a whole unit short because a few seconds went by.
import { describe, expect, it } from 'vitest'
import { durationLeftIn } from '../src/format-duration'

describe('durationLeftIn', () => {
  it('a 5-minute request asked seconds ago has 5 minutes left, and just short of an hour is an hour', () => {
    expect(durationLeftIn(300_000 - 3_000)).toEqual({ unit: 'minutes', count: 5 })
    expect(durationLeftIn(300_000)).toEqual({ unit: 'minutes', count: 5 })
    expect(durationLeftIn(600_000 - 45_000)).toEqual({ unit: 'minutes', count: 10 })
    expect(durationLeftIn(3_600_000 - 20_000)).toEqual({ unit: 'hours', count: 1 })
    expect(durationLeftIn(86_400_000 - 60_000)).toEqual({ unit: 'days', count: 1 })
  })

  it('otherwise counts whole units, as before: a deadline is never put later by more than a tenth', () => {
    expect(durationLeftIn(270_000)).toEqual({ unit: 'minutes', count: 4 })
    expect(durationLeftIn(90_000)).toEqual({ unit: 'minutes', count: 1 })
    expect(durationLeftIn(6_000_000)).toEqual({ unit: 'hours', count: 1 })
    expect(durationLeftIn(45_000)).toEqual({ unit: 'seconds', count: 45 })
  })

  it('anything left under a second is 1 second; nothing left is 0', () => {
    expect(durationLeftIn(400)).toEqual({ unit: 'seconds', count: 1 })
    expect(durationLeftIn(0)).toEqual({ unit: 'seconds', count: 0 })
    expect(durationLeftIn(-5_000)).toEqual({ unit: 'seconds', count: 0 })
  })
})
