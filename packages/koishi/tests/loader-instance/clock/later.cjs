// Preloaded (NODE_OPTIONS=--require) into a Koishi worker that should live later than the
// real clock: Date.now() and `new Date()` run DOGU_CLOCK_OFFSET_MS ahead, as if the bot had
// been down that long. Timers are untouched. Used by loader-restart.spec.ts for an expiry
// that passes while the bot is down.
const offset = Number(process.env.DOGU_CLOCK_OFFSET_MS)
if (Number.isFinite(offset) && offset) {
  const RealDate = Date
  class LaterDate extends RealDate {
    constructor(...args) {
      if (args.length) super(...args)
      else super(RealDate.now() + offset)
    }

    static now() {
      return RealDate.now() + offset
    }
  }
  globalThis.Date = LaterDate
}
