import { type CallInfo, defineTool, type Tool, type ToolResult } from '@dogu/core'
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { expectTypeOf, test } from 'vitest'
import type { ToolService } from '../src'

declare const ctx: Context

test('ctx.tools is the tool service', () => {
  expectTypeOf(ctx.tools).toEqualTypeOf<ToolService>()
  expectTypeOf(ctx.tools.define).returns.toEqualTypeOf<() => void>()
  expectTypeOf(ctx.tools.list()).toEqualTypeOf<Tool[]>()
})

test('define takes tools whose arguments are typed, and tools whose arguments are unknown', () => {
  const args = Schema.object({ city: Schema.string().required() })
  const typed = defineTool({ name: 'weather', description: 'Weather', args, run: ({ city }) => city })
  expectTypeOf(typed).toEqualTypeOf<Tool<Schemastery.TypeT<typeof args>>>()
  ctx.tools.define(typed)
  const untyped = defineTool({ name: 'ping', description: 'Ping', run: () => 'pong' })
  expectTypeOf(untyped).toEqualTypeOf<Tool<unknown>>()
  ctx.tools.define(untyped)
})

test('the runtime events are Cordis events', () => {
  ctx.on('tools/call-start', (info) => {
    expectTypeOf(info).toEqualTypeOf<CallInfo>()
  })
  ctx.on('tools/call-progress', (info, message) => {
    expectTypeOf(message).toEqualTypeOf<string>()
  })
  ctx.on('tools/call-end', (info, result) => {
    expectTypeOf(result).toEqualTypeOf<ToolResult>()
  })
  ctx.on('tools/changed', () => {})
  // @ts-expect-error: not an event of the runtime
  ctx.on('tools/call-middle', () => {})
})
