import type { BackgroundTask } from './background-task'

/** Events of the background service; `@dogu/cordis` emits them as `ctx.emit('background/…')`. */
export interface BackgroundEvents {
  /**
   * A task reached its final status by itself or by cancel. `task.session` says where it
   * came from, so a host can tell that chat. Not emitted for tasks interrupted on dispose.
   */
  'background/settled'(task: BackgroundTask): void
}
