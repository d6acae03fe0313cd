// Exports chosen one by one: eviction, result capping, record checks and the in-memory
// store stay internal for now.
export { BackgroundEngine, type BackgroundEngineOptions, type ListTasksOptions, type WaitTaskOptions } from './background-engine'
export type { BackgroundEvents } from './background-events'
export type { BackgroundTask, TaskStatus } from './background-task'
export { DatabaseTaskStore, type DatabaseTaskStoreOptions, TASK_TABLE } from './database-task-store'
export { JsonFileTaskStore, type JsonFileTaskStoreOptions } from './json-file-task-store'
export { DEFAULT_RETENTION, type RetentionLimits } from './retention'
export type { TaskStore } from './task-store'
export { createTaskTools, type TaskToolsOptions, type TaskTracker } from './task-tools'
