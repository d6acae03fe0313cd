// The host layer: what every host of Dogu (Cordis 4, Koishi, a framework adapter) shares.
// It imports no framework; see docs/hosts.md.
export { attachEngine, type EngineSlots } from './attach-engine'
export { auditHost } from './audit-host'
export { backgroundHost } from './background-host'
export { callingPlugin, type HostBaseClass, type HostPlugin, pluginEffect } from './host-plugin'
export { permissionsHost, ruleLabel } from './permissions-host'
export { toolsHost } from './tools-host'
