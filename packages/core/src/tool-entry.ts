import { compileValidator, type Validator } from '@dogu/schema'
import type Schema from 'schemastery'
import { ConcurrencyLimit } from './concurrency-limit'
import type { RegisteredMiddleware } from './middleware/registered-middleware'
import { type SecretPaths, secretPaths } from './secret-fields'
import type { PermissionSpec, Tool } from './tool'

/** A registered tool with its owner and the state the pipeline keeps for it. */
export class ToolEntry {
  readonly limit?: ConcurrencyLimit
  /** Where the tool's arguments hold secrets; `undefined` for most tools. */
  readonly secrets?: SecretPaths
  disposed = false
  /** The toolset's own `tool_search`: a lookup, not a tool an owner's quota counts. */
  uncounted = false
  /** The middlewares around this tool's calls, as of `chainVersion` (`MiddlewareStack.chainFor`). */
  chain: readonly RegisteredMiddleware[] | undefined = undefined
  chainVersion = -1
  private _validator?: Validator
  // Made on first use: a registry of thousands of tools sees few of them called or listed.
  private _defaultPermission?: PermissionSpec
  private _definitions?: Map<string, unknown>

  constructor(public readonly tool: Tool, public readonly owner: object, public readonly ownerName: string) {
    // Cached per schema, and computed already by defineTool.
    this.secrets = secretPaths(tool.args)
    if (Number.isFinite(tool.traits.concurrency)) this.limit = new ConcurrencyLimit(tool.traits.concurrency)
  }

  /** `tool:<name>`, the permission a call asks for when the tool declares none. */
  get defaultPermission(): PermissionSpec {
    return this._defaultPermission ??= Object.freeze({ name: `tool:${this.tool.name}` })
  }

  /** Provider definitions, computed once per dialect. */
  get definitions(): Map<string, unknown> {
    return this._definitions ??= new Map()
  }

  get validator(): Validator {
    return this._validator ??= validatorOf(this.tool.args)
  }

  /** Checks the result's `data` when the tool declares an `output` schema; unset otherwise. */
  get outputValidator(): Validator | undefined {
    const output = this.tool.output
    return output && validatorOf(output)
  }
}

const validators = new WeakMap<Schema, Validator>()

/**
 * One compiled validator per schema: a tool redefined on reload, or `tool_search` (a new
 * entry in every search-mode toolset), reuses the schema and so the compiled code.
 */
function validatorOf(args: Schema): Validator {
  let validator = validators.get(args)
  if (!validator) validators.set(args, validator = compileValidator(args))
  return validator
}
