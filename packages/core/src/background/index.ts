// Exports chosen one by one: eviction and result capping stay internal for now.
export { BackgroundEngine, type BackgroundEngineOptions, type ListTasksOptions, type WaitTaskOptions } from './background-engine'
export type { BackgroundEvents } from './background-events'
export { type BackgroundTask, isBackgroundTask, TASK_STATUS_OF, type TaskStatus } from './background-task'
export { JsonFileTaskStore, type JsonFileTaskStoreOptions } from './json-file-task-store'
export { DEFAULT_RETENTION, type RetentionLimits } from './retention'
export { MemoryTaskStore, type TaskStore } from './task-store'
export { createTaskTools, type TaskToolsOptions, type TaskTracker } from './task-tools'
