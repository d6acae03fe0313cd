import Schema from 'schemastery'
import { defineTool } from '@dogu/core'
import { FsError } from '../errors'
import { formatBytes, openChecked, openDirectory, realPathOf } from '../fs-backend'
import { type FsContext, expectPermitted, childDisplay, permissionFor } from '../fs-context'
import { compileGlob, descender } from '../glob-pattern'
import { grepFiles } from '../grep-files'

const MODES = ['content', 'files', 'count'] as const

// A module-level schema: `run`'s argument types are inferred from it.
const Args = Schema.object({
  pattern: Schema.string().required().description('JavaScript regular expression (or plain text with literal: true)'),
  path: Schema.string().description('File or directory to search, relative to the working directory'),
  glob: Schema.string().description('Only files whose path relative to the searched directory matches this glob; a glob without "/" matches file names at any depth (e.g. "*.ts")'),
  mode: Schema.union(MODES).default('content').description('content | files | count'),
  ignoreCase: Schema.boolean().default(false),
  literal: Schema.boolean().default(false).description('Treat pattern as plain text'),
  maxResults: Schema.natural().min(1).max(2000).default(200).description('Stop after this many lines (content) or files (files, count); 1-2000'),
})

/** The `grep` tool: search file contents with a regular expression. */
export function grepTool(context: FsContext) {
  const { resolver, limits, ignore } = context
  return defineTool({
    name: `${context.prefix}grep`,
    description: `Search file contents with a JavaScript regular expression, line by line. mode "content" lists path:line:text, "files" lists matching files, "count" lists path:count. Searches below path (default: the working directory), skipping ${[...ignore].join(', ') || 'nothing'}, binary files and files over ${formatBytes(limits.grepFileBytes)}.`,
    args: Args,
    permission: permissionFor(context, 'fs.read'),
    traits: { effect: 'read', timeout: 120_000 },
    async run(args, call) {
      const regex = compileRegex(args.pattern, args.literal)
      const filter = args.glob ? compileGlob(args.glob, { dot: true, matchBase: true }, 'glob') : undefined
      const dir = expectPermitted(context, call, await resolver.resolve(args.path || '.', call.session, { access: 'read', intent: 'existing' }))
      if (dir.kind === 'other') throw new FsError('NOT_A_FILE', `${dir.display} is neither a file nor a directory`)
      const single = dir.kind === 'file'
      // The directory, or the one file, held open: nothing below it is reached through a link swapped in.
      const held = single ? await openChecked(dir) : await openDirectory(dir)
      const report = await grepFiles({
        root: realPathOf(dir),
        rootFd: held.fd,
        single,
        regex,
        // A pattern without regex syntax is searched as bytes first, like a literal.
        literal: args.literal || !/[\\^$.*+?()[\]{}|]/.test(args.pattern) ? args.pattern : undefined,
        ignoreCase: args.ignoreCase,
        mode: args.mode,
        maxResults: args.maxResults,
        filter: filter && ((rel) => filter.match(rel)),
        // A glob without "/" matches names at any depth (matchBase), so it cannot prune directories.
        descend: descender(ignore, args.glob?.includes('/') ? filter : undefined),
        maxFileBytes: limits.grepFileBytes,
        maxLineLength: limits.grepLineLength,
        signal: call.signal,
        progressEvery: limits.grepProgressEvery,
        onProgress: (scanned, results) => call.progress(`searched ${scanned} files, ${results} results so far`),
      }).finally(() => held.close())
      const show = (rel: string) => single ? dir.display : childDisplay(dir, rel)
      const out: string[] = []
      for (const file of report.files) {
        if (args.mode === 'files') out.push(show(file.path))
        else if (args.mode === 'count') out.push(`${show(file.path)}:${file.count}`)
        else for (const line of file.lines) out.push(`${show(file.path)}:${line.line}:${line.text}`)
      }
      if (!out.length) out.push(`No matches in ${dir.display} (${report.scanned} file${report.scanned === 1 ? '' : 's'} searched).`)
      if (report.truncated) out.push(`[stopped at maxResults=${args.maxResults}; more matches exist]`)
      const skipped = [
        report.skippedBinary && `${report.skippedBinary} binary`,
        report.skippedLarge && `${report.skippedLarge} over ${formatBytes(limits.grepFileBytes)}`,
        report.unreadable && `${report.unreadable} unreadable`,
      ].filter(Boolean)
      if (skipped.length) out.push(`[skipped files: ${skipped.join(', ')}]`)
      return {
        text: out.join('\n'),
        data: {
          results: report.results,
          truncated: report.truncated,
          scanned: report.scanned,
          skippedBinary: report.skippedBinary,
          skippedLarge: report.skippedLarge,
          unreadable: report.unreadable,
          files: report.files.map((file) => ({ path: show(file.path), count: file.count, lines: file.lines })),
        },
      }
    },
  })
}

function compileRegex(pattern: string, literal: boolean): RegExp {
  if (!pattern) throw new FsError('INVALID_ARGUMENT', 'pattern is empty')
  if (literal) return new RegExp(pattern.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))
  try {
    // Unicode mode only when the pattern asks for it: it rejects escapes many patterns use.
    return new RegExp(pattern, /\\[pP]\{|\\u\{/.test(pattern) ? 'u' : '')
  } catch (error) {
    throw new FsError('INVALID_ARGUMENT', `pattern is not a valid JavaScript regular expression: ${(error as Error).message}`)
  }
}
