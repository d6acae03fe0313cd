#!/usr/bin/env node
// dogu-mcp [config.json]: serves the tools of the plugins the config lists over stdio.
// The app stops when the client closes stdin, or on SIGINT/SIGTERM.
import { runDoguMcpCommand } from '../lib/index.js'

runDoguMcpCommand()
