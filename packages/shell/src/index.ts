// The command-line parser and classifier (split-command-line, classify-command,
// detect-writes, read-commands) stay internal: `shellPermission` is how a host sees them.
export type { ClassifyOptions } from './classify-command'
export type { CapturedOutput } from './output-buffer'
export { Config, apply, inject, name, type ShellHost } from './plugin'
export * as default from './plugin'
export { type ProcessOutcome, type ProcessStatus, ProcessTable, type ProcessTableOptions, type RunRequest, type RunWatch, type TrackedProcess } from './process-table'
export { ShellError } from './shell-error'
export { createShellTool, type ShellPermission, shellPermission, type ShellToolOptions } from './shell-tool'
export { detectSandbox, type SandboxSupport } from './detect-sandbox'
export { SANDBOX_LIMITS, SandboxConfig, type SandboxLimits, type SandboxMode, type SandboxNetwork, type SandboxOptions } from './sandbox-config'
export type { SandboxState } from './sandbox-plan'
