// The permission engine's surface for the rest of core and its tests (src/index.ts picks
// the public names); compiling, indexing and keys stay internal.
export type { AnswerVia, Approver, ApproverPolicy, AskAnswer, Asker, AskerContext, AskScope, EditedArguments, InputQuestion, PermissionRequest, RespondStatus } from './asker'
export { describeApprovers, mayAnswer } from './may-answer'
export { type AskedMessage, askedMessage } from './asked-message'
export type { Grant, GrantSubject } from './grant'
export { type GrantStore, type GrantStoreLoad, MemoryGrantStore } from './grant-store'
export { DatabaseGrantStore, type DatabaseGrantStoreOptions, GRANT_TABLE } from './database-grant-store'
export { JsonFileGrantStore } from './json-file-grant-store'
export type { DecisionEvent, DecisionSource, RuleSource } from './permission-decision'
export { PermissionEngine, type PermissionEngineOptions } from './permission-engine'
export { PermissionError } from './permission-error'
export { isPermissionMode, PERMISSION_MODES, type PermissionMode } from './permission-modes'
export type { PermissionRule, RuleApprovers, RuleCondition } from './permission-rule'
