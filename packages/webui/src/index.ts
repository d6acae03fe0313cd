export { type CallOutcome, CONSOLE_PLATFORM, ConsoleApi, ConsoleAsker, ConsoleError, ConsoleLog, type ConsoleHost, type ConsoleMethod, type ConsoleRequestOptions, type FileChangeSummary, type LogEntry, type SessionQuotas, type ToolSummary } from './console'
export { TOKEN_HEADER } from './http-guard'
export { BASE, OAUTH_CALLBACK_PATH, WebUI, WebUI as default } from './webui-service'
