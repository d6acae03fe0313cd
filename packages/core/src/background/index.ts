// Exports chosen one by one: eviction, result capping, record checks and the in-memory
// store stay internal for now.
export { BackgroundEngine } from './background-engine'
export type { BackgroundEngineOptions, ListTasksOptions, WaitTaskOptions } from './background-options'
export type { BackgroundEvents } from './background-events'
export type { BackgroundTask, TaskStatus } from './background-task'
export { DatabaseTaskStore, type DatabaseTaskStoreOptions, TASK_TABLE } from './database-task-store'
export { JsonFileTaskStore, type JsonFileTaskStoreOptions } from './json-file-task-store'
export { DEFAULT_RETENTION, type RetentionLimits } from './retention'
export type { TaskStore } from './task-store'
export { createTaskTools, type TaskToolsOptions, type TaskTracker } from './task-tools'
