// The console's API without a host: what the page calls (ConsoleApi), the console as an
// asker, its live log and its errors. Nothing here imports cordis or a server, so a host
// other than Cordis 4 (koishi-plugin-dogu, over Koishi's console socket) bundles this entry
// alone; `@dogu/webui`'s own entry adds the Cordis 4 service and its HTTP transport.
export { type CallOutcome, CONSOLE_PLATFORM, ConsoleApi, type ConsoleHost, type ConsoleMethod, type ConsoleRequestOptions, type FileChangeSummary, type SessionQuotas, type SourceSummary, type ToolSummary } from './console-api'
export { ConsoleAsker, type FormAnswer } from './console-asker'
export { ConsoleError, errorBody } from './console-error'
export { ConsoleLog, type DecisionDetail, type LogEntry } from './console-log'
