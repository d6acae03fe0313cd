#!/usr/bin/env node
// dogu-mcp [options] [config.json]: serves the tools of the plugins the config lists over stdio
// (`dogu-mcp --help` says how). The app stops when the client closes stdin, or on SIGINT/SIGTERM.
import { runDoguMcpCommand } from '../lib/index.js'

runDoguMcpCommand()
