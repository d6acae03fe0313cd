// The host layer: what every host of Dogu (Cordis 4, Koishi, a framework adapter) shares.
// It imports no framework; see docs/hosts.md.
export { attachEngine, type EngineSlots } from './attach-engine'
export { type AuditHostConfig, auditHost, auditLogOptions } from './audit-host'
export { backgroundHandOver, backgroundHost, type BackgroundHostConfig, backgroundLimits } from './background-host'
export { callingPlugin, type HostBaseClass, type HostPlugin, pluginEffect } from './host-plugin'
export { type HostEmitter } from './host-emitter'
export { HostTaps, hostTaps } from './host-taps'
export { permissionEngineOptions, permissionsHost, type PermissionsHostConfig, ruleLabel } from './permissions-host'
export { toolRegistryOptions, toolsHost, type ToolsHostConfig } from './tools-host'
