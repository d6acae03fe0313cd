import Schema from 'schemastery'
import { defineTool } from '@dogu/core'
import { openDirectory, realPathOf } from '../fs-backend'
import { type FsContext, expectPermitted, childDisplay, permissionFor } from '../fs-context'
import { globFiles } from '../glob-files'
import { compileGlob } from '../glob-pattern'

// A module-level schema: `run`'s argument types are inferred from it.
const Args = Schema.object({
  pattern: Schema.string().required().description('Glob, e.g. "src/**/*.ts"'),
  path: Schema.string().description('Directory to search, relative to the working directory'),
  dot: Schema.boolean().default(false).description('Let * and ** match names starting with "."'),
  maxResults: Schema.natural().min(1).max(2000).default(200).description('1-2000'),
})

/** The `glob` tool: find paths by pattern. */
export function globTool(context: FsContext) {
  const { resolver, ignore } = context
  return defineTool({
    name: `${context.prefix}glob`,
    description: `Find files and directories whose path, relative to path (default: the working directory), matches a glob: * ? [abc] {a,b} ** and extglobs like +(a|b). Directories are listed with a trailing "/". Names starting with "." match only when dot is true or the pattern spells the dot. Does not enter ${[...ignore].join(', ') || 'nothing'} or follow symbolic links. Results are sorted by path.`,
    args: Args,
    permission: permissionFor(context, 'fs.read'),
    traits: { effect: 'read', timeout: 120_000 },
    async run(args, call) {
      const matcher = compileGlob(args.pattern, { dot: args.dot })
      const dir = expectPermitted(context, call, await resolver.resolve(args.path || '.', call.session, { access: 'read', intent: 'existing', expect: 'directory' }))
      const held = await openDirectory(dir)
      const report = await globFiles({ root: realPathOf(dir), rootFd: held.fd, matcher, maxResults: args.maxResults, ignore, signal: call.signal })
        .finally(() => held.close())
      const paths = report.matches.map((match) => childDisplay(dir, match.path) + (match.kind === 'directory' ? '/' : ''))
      const lines = paths.length ? [...paths] : [`No paths in ${dir.display} match ${JSON.stringify(args.pattern)}.`]
      if (report.truncated) lines.push(`[stopped at maxResults=${args.maxResults}; more paths match]`)
      return { text: lines.join('\n'), data: { paths, truncated: report.truncated, visited: report.visited } }
    },
  })
}
