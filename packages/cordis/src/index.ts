export { BackgroundService } from './background-service'
export { DoguPlugin, DoguPlugin as default } from './dogu-plugin'
export { PermissionService } from './permissions-service'
export { ToolService } from './tools-service'
