// The package's contract: each name below is one users may rely on. Anything else is
// internal, however it is exported between files.
export {
  type AuditAsk,
  type AuditAskEnd,
  type AuditCaller,
  type AuditDecider,
  type AuditFilter,
  AuditLog,
  type AuditLogOptions,
  type AuditRecord,
  type AuditResumes,
  type AuditRetention,
  type AuditStore,
  AUDIT_TABLE,
  DatabaseAuditStore,
  type DatabaseAuditStoreOptions,
  DEFAULT_AUDIT_RETENTION,
  JsonlAuditStore,
  type JsonlAuditStoreOptions,
  MemoryAuditStore,
} from './audit'
export {
  BackgroundEngine,
  type BackgroundEngineOptions,
  type BackgroundEvents,
  type BackgroundTask,
  createTaskTools,
  DatabaseTaskStore,
  type DatabaseTaskStoreOptions,
  DEFAULT_RETENTION,
  JsonFileTaskStore,
  type JsonFileTaskStoreOptions,
  type ListTasksOptions,
  type RetentionLimits,
  TASK_TABLE,
  type TaskStatus,
  type TaskStore,
  type TaskToolsOptions,
  type TaskTracker,
  type WaitTaskOptions,
} from './background'
export type { BackgroundPort, RunningCall } from './background-port'
export type { MinatoCursor, MinatoDatabase } from './database/minato-database'
export { defineTool } from './define-tool'
export type { MiddlewareCall, MiddlewareDenial, MiddlewareNext, MiddlewareOptions, ToolMiddleware } from './middleware/tool-middleware'
export type { RedactOptions } from './redaction/redactor'
export {
  DatabaseQuotaStore,
  type DatabaseQuotaStoreOptions,
  formatDuration,
  type MaxRunning,
  MemoryQuotaStore,
  parseDuration,
  QUOTA_SCOPES,
  QUOTA_TABLE,
  QuotaBook,
  type QuotaRule,
  type QuotaScope,
  type QuotaSlot,
  type QuotaStatus,
  type QuotaStore,
} from './quotas'
export { DoguError } from './errors'
export { type Elicitation, type ElicitationJsonSchema, type ElicitationSchema, type ElicitOptions, LOG_LEVELS, type LogLevel } from './elicitation/elicitation'
export { type FormField, formFields, type FormProblem, type FormReply, MAX_FORM_LENGTH, parseFormReply, typedValue } from './elicitation/form-reply'
export type { CallInfo, EmitFunction, ResumedFrom, ToolEvents } from './events'
// The host layer: what a host of Dogu (Cordis 4, Koishi, a framework adapter) builds its services on.
export {
  attachEngine,
  auditHost,
  type AuditHostConfig,
  auditLogOptions,
  backgroundHandOver,
  backgroundHost,
  type BackgroundHostConfig,
  backgroundLimits,
  callingPlugin,
  type EngineSlots,
  type HostBaseClass,
  type HostEmitter,
  type HostPlugin,
  HostTaps,
  hostTaps,
  permissionEngineOptions,
  permissionsHost,
  type PermissionsHostConfig,
  pluginEffect,
  ruleLabel,
  toolRegistryOptions,
  toolsHost,
  type ToolsHostConfig,
} from './host'
export type { Logger } from './logger'
export type { ApprovalOutcome, ApprovalRequest, ArgumentEditor, ElicitQuestion, AuthorizeRequest, AuthorizeResult, Decision, PermissionGate, PipelineDecision, RevisedCall } from './permission-gate'
export {
  type AnswerVia,
  type Approver,
  type ApproverPolicy,
  type AskAnswer,
  type AskedMessage,
  askedMessage,
  type Asker,
  type AskerContext,
  type AskScope,
  type AnswerResult,
  type ClosedRequest,
  DatabaseGrantStore,
  type DatabaseGrantStoreOptions,
  DatabasePendingStore,
  type DatabasePendingStoreOptions,
  type DecisionEvent,
  describeApprovers,
  type DecisionSource,
  type Grant,
  type GrantStore,
  type GrantStoreLoad,
  type GrantSubject,
  GRANT_TABLE,
  isPermissionMode,
  JsonFileGrantStore,
  JsonFilePendingStore,
  mayAnswer,
  MemoryPendingStore,
  PENDING_TABLE,
  type PendingRecord,
  type PendingStore,
  type PendingStoreLoad,
  PERMISSION_MODES,
  PermissionEngine,
  type PermissionEngineOptions,
  PermissionError,
  type PermissionMode,
  type EditedArguments,
  type InputQuestion,
  type PermissionRequest,
  type PermissionRule,
  type RespondStatus,
  type ResumedCall,
  type ResumeFailure,
  type ResumeHandler,
  type RuleApprovers,
  type RuleCondition,
  type RuleSource,
  type StoredSession,
} from './permissions'
export { summarizeArgs } from './permissions/summarize-args'
export {
  type FieldWeights,
  type SearchDocument,
  type SearchHit,
  type SearchOptions,
  type SummaryStyle,
  type ToolSearchData,
  ToolSearchIndex,
  type ToolSearchIndexOptions,
} from './search'
export { maskSecrets, restoreSecrets, SECRET_MASK, type SecretPaths, secretPaths } from './secret-fields'
export { jsonChanges } from './json-changes'
export type { Session } from './session'
export { traceMeta, withTraceMeta } from './telemetry/trace-meta'
export type { Effect, PermissionSpec, Tool, ToolOptions, ToolTraits } from './tool'
export { normalizePreview, type PreviewFunction, type ToolPreview } from './tool-preview'
export type { ModelToolCall, ToolCall } from './tool-call'
export {
  type AnthropicToolDefinition,
  type DefinitionMap,
  type GeminiFunctionDeclaration,
  type JsonToolDefinition,
  type OpenAIToolDefinition,
  toolDefinition,
} from './tool-definition'
export { maskRepairedText, maskRepairRecord, REPAIR_STEPS, type RepairedArguments, repairArguments, type RepairRecord, type RepairRefusal, type RepairStep, UNMASKABLE_FROM } from './repair'
export { ToolDenial } from './tool-denial'
export { ToolRateLimit } from './tool-rate-limit'
export { ToolRegistry, type ToolRegistryOptions } from './tool-registry'
export type { ToolSource, UnavailableSource } from './tool-source'
export type { AbortCause, AbortParams, ArgumentProblem, ArgumentsRefusal, MiddlewareFailure, ResultMessage, ResultParams, ResultParamsByCode, RevisionRefusal } from './result-params'
export {
  catalogueFor,
  describeDenial,
  describeProblem,
  describeResult,
  describeRevision,
  DURATION_UNITS,
  type DurationOptions,
  type DurationUnit,
  durationUnitOf,
  enUS,
  formatDurationFor,
  type MessageCatalogue,
  type MessageLocale,
  MESSAGE_LOCALES,
  messageLocale,
  messageTerms,
  type MessageTerms,
  resultMessage,
  type RevisionBy,
  SECRET_CHANGED,
  zhCN,
} from './messages'
export type { AskedFor, Denial, DenialCause, RuleCause } from './types/denial'
export { TOOL_STATUSES, type ToolArtifact, type ToolAudio, type ToolImage, type ToolResource, type ToolOutput, type ToolOutputObject, type ToolResult, type ToolResultCode, type ToolStatus } from './tool-result'
export { type ExecuteOptions, Toolset, type ToolsetOptions } from './toolset'
export type { CallDecision } from './call-decision'
export { writeFileAtomically } from './write-file-atomically'
// The error factory lives in @dogu/schema, the one package every other one reaches.
export { type CodedError, codedError, type CodedErrorClass, type Dialect, type ExpectedValue, type IssueDetail, type IssueKind, type Loosening, type ShownValue } from '@dogu/schema'
