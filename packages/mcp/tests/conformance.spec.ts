// The official MCP conformance suite (@modelcontextprotocol/conformance, pinned) against
// Dogu's MCP server over Streamable HTTP, with the tools its scenarios name defined through
// Dogu's own API (fixtures/conformance-tools.ts). One run of every server scenario; each goal
// scenario must pass: no check of it a FAILURE. Resources, prompts, completion and sampling
// are not served by Dogu and are not asserted; `yarn conformance` reports them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { runServerSuite, type SuiteRun } from '../../../test-support/mcp-conformance/run-suite'
import { type ConformanceServer, startConformanceServer } from './fixtures/conformance-server'

/** Every server scenario of the suite (0.1.16, `--suite all`). */
const SCENARIOS = 32

/** The server scenarios on tools, elicitation, logging, JSON Schema, SSE, the lifecycle and DNS rebinding. */
const GOALS = [
  'server-initialize',
  'ping',
  'logging-set-level',
  'tools-list',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-with-logging',
  'tools-call-error',
  'tools-call-with-progress',
  'tools-call-elicitation',
  'elicitation-sep1034-defaults',
  'elicitation-sep1330-enums',
  'json-schema-2020-12',
  'server-sse-polling',
  'server-sse-multiple-streams',
  'dns-rebinding-protection',
]

describe('the MCP conformance suite against Dogu\'s server (Streamable HTTP)', () => {
  let server: ConformanceServer
  let run: SuiteRun

  beforeAll(async () => {
    server = await startConformanceServer({ prepare: (ctx) => guardLogs(ctx) })
    run = await runServerSuite(server.url, { timeout: 90_000 })
  }, 120_000)
  afterAll(async () => {
    await server?.close()
  })

  it(`runs all ${SCENARIOS} server scenarios`, () => {
    expect(run.scenarios.size, run.output).toBe(SCENARIOS)
  })

  it.each(GOALS)('%s passes', (scenario) => {
    const outcome = run.scenarios.get(scenario)
    expect(outcome, `${scenario} did not run:\n${run.output}`).toBeDefined()
    expect(outcome!.failures).toEqual([])
    expect(outcome!.passed).toBe(true)
  })
})
