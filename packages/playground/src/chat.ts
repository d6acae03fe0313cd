import { AgentError, type ChatMessage, type Endpoint, runAgent, TaskNotices } from '@dogu/agent'
import type { BackgroundTask, Session, ToolResult } from '@dogu/core'
import type { Context } from 'cordis'

/** The model the playground chats with; `DOGU_BASE_URL`, `DOGU_MODEL`, `DOGU_API_KEY` from the command line. */
export type ModelConfig = Endpoint

export interface ChatOptions {
  ctx: Context
  session: Session
  model: ModelConfig
  /** Writes text as it is (streamed model text). */
  write(text: string): void
  /** Prints a whole line. */
  print(text: string): void
  /** The system message. @default a short one about the playground */
  system?: string
  /** Model turns per message at most. @default 10 */
  maxSteps?: number
}

/** One conversation at the prompt. */
export interface Chat {
  /** Sends the user's text and prints the reply, tool calls and results as they happen. */
  send(text: string): Promise<void>
  /** True while a turn is in flight. */
  readonly busy: boolean
  /** Stops the turn in flight, if any: its stream and its calls. */
  abort(): void
  dispose(): void
}

const SYSTEM = 'You are the assistant of the Dogu playground. Use the tools when they help, and answer briefly.'

/** The first line of a text, cut for the terminal. */
function preview(text: string): string {
  const line = text.split('\n', 1)[0]
  return line.length > 160 ? `${line.slice(0, 160)}…` : line
}

/** A result's content without the note Dogu puts first for the model when it repaired the arguments: the `~` line tells the person. */
function withoutNote(result: ToolResult): string {
  const { content } = result
  return result.repaired && /^Note: [^\n]*\n\n/.test(content) ? content.slice(content.indexOf('\n\n') + 2) : content
}

/**
 * A chat over `runAgent`: each line typed is a user message; the conversation is kept
 * across lines, and background tasks that settle are told to the model before its next turn.
 */
export function createChat(options: ChatOptions): Chat {
  const { ctx, session, write, print } = options
  const messages: ChatMessage[] = [{ role: 'system', content: options.system ?? SYSTEM }]
  const notices = new TaskNotices({
    session,
    subscribe: (listener) => ctx.on('background/settled', (task: BackgroundTask) => listener(task)),
  })
  let controller: AbortController | undefined
  return {
    get busy() {
      return !!controller
    },
    async send(text) {
      controller = new AbortController()
      let open = false
      const close = () => {
        if (open) write('\n')
        open = false
      }
      try {
        const result = await runAgent({
          endpoint: options.model,
          toolset: ctx.tools.toolset({ session }),
          messages: [...messages, { role: 'user', content: text }],
          maxSteps: options.maxSteps,
          notices,
          signal: controller.signal,
          onEvent(event) {
            switch (event.type) {
              case 'text':
                if (!open) write('model: ')
                open = true
                write(event.delta)
                break
              case 'tool-call':
                close()
                // `runAgent` names the calls it read out of the model's text `text_call_<n>`.
                if (event.call.id.startsWith('text_call_')) print(`  ~ ${event.call.name}: the model wrote this call into its text; it was read out as a call`)
                break
              case 'tool-result': {
                const { result } = event
                if (result.repaired) print(`  ~ ${result.name}: the model's arguments were repaired (${result.repaired.steps.join(', ')}); it sent ${preview(result.repaired.from.replace(/\r?\n/g, '\\n'))}`)
                print(`  = ${result.name} ${result.status}: ${preview(withoutNote(result))}`)
                break
              }
              case 'notice':
                close()
                print(`  (told the model: ${event.tasks.map((task) => `task ${task.id} ${task.status}`).join(', ')})`)
                break
              case 'retry':
                close()
                print(`  (retrying in ${event.delayMs} ms: ${event.reason})`)
                break
              case 'end':
                close()
                if (event.result.finishReason === 'max_steps') print(`  (stopped after ${event.result.steps} model turns)`)
                break
            }
          },
        })
        messages.splice(0, messages.length, ...result.messages)
      } catch (error) {
        close()
        // A failed turn keeps what was complete, so the next line continues from there.
        if (AgentError.is(error) && error.messages) messages.splice(0, messages.length, ...error.messages)
        print(`! ${error instanceof Error ? error.message : String(error)}`)
      } finally {
        controller = undefined
      }
    },
    abort() {
      controller?.abort(new Error('stopped at the terminal'))
    },
    dispose() {
      controller?.abort(new Error('the playground closed'))
      notices.dispose()
    },
  }
}

/** The model from `DOGU_BASE_URL`, `DOGU_MODEL` and `DOGU_API_KEY`, when both of the first two are set. */
export function modelFromEnv(env: Record<string, string | undefined>): ModelConfig | undefined {
  const baseURL = env.DOGU_BASE_URL?.trim()
  const model = env.DOGU_MODEL?.trim()
  if (!baseURL || !model) return undefined
  return { baseURL, model, ...(env.DOGU_API_KEY ? { apiKey: env.DOGU_API_KEY } : {}) }
}
