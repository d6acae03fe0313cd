import { checkArguments, type ArgumentSpec } from './argument-spec'
import { lexicalPathOperands, type PathOperands } from './path-operands'

/**
 * Why a simple command is not read-only, or `undefined` when it is. `paths` judges path
 * operands; by default only by their text.
 */
export type ReadRule = (args: readonly string[], paths?: PathOperands) => string | undefined

// Flags that follow symbolic links met while walking a directory are not listed anywhere
// below: a link inside the workspace may lead out of it, and only operands are resolved.

const NUMBER = /^-\d+$/

const HEAD: ArgumentSpec = { short: 'qvz', shortValue: 'nc', long: ['--lines=', '--bytes=', '--quiet', '--silent', '--verbose', '--zero-terminated'], patterns: [NUMBER] }

// GNU tail still takes the old `+N[bcl][f]` form as its first argument: `tail +1f x`
// follows x forever, like `-f`, which is not listed.
const TAIL: ArgumentSpec = {
  ...HEAD,
  operand: (operand) => operand.startsWith('+') ? `\`tail ${operand}\`: an old-style \`+N\` option (with \`f\` it follows the file forever)` : undefined,
}

// No `-R` / `--dereference-recursive`; `-r` follows only links given as operands.
const GREP: ArgumentSpec = {
  short: 'iynrlLcvwxEFGPHhoqsabIUzZT',
  shortValue: 'eABCmd',
  long: [
    '--regexp=', '--ignore-case', '--no-ignore-case', '--line-number', '--recursive',
    '--files-with-matches', '--files-without-match', '--count', '--invert-match', '--word-regexp', '--line-regexp',
    '--extended-regexp', '--fixed-strings', '--basic-regexp', '--perl-regexp', '--with-filename', '--no-filename',
    '--only-matching', '--quiet', '--silent', '--no-messages', '--text', '--binary-files=', '--include=', '--exclude=',
    '--exclude-dir=', '--max-count=', '--after-context=', '--before-context=', '--context=', '--color[=]', '--colour[=]',
    '--null', '--null-data', '--byte-offset', '--initial-tab', '--label=', '--directories=', '--devices=',
  ],
  patterns: [NUMBER],
  patternFirst: true,
}

// ripgrep: no `--pre` (runs a program per file), no `-z` (runs decompressors), no `-L`/`--follow`.
const RG: ArgumentSpec = {
  short: 'iSsnNlcvwxFHhoqauU.0IpPb',
  shortValue: 'egtTmABCMjrd',
  long: [
    '--regexp=', '--ignore-case', '--smart-case', '--case-sensitive', '--line-number', '--no-line-number',
    '--files-with-matches', '--files-without-match', '--count', '--count-matches', '--invert-match', '--word-regexp',
    '--line-regexp', '--fixed-strings', '--with-filename', '--no-filename', '--only-matching', '--quiet', '--text',
    '--hidden', '--no-ignore', '--glob=', '--iglob=', '--type=', '--type-not=', '--type-list',
    '--max-count=', '--max-depth=', '--after-context=', '--before-context=', '--context=', '--color=', '--json',
    '--files', '--sort=', '--sortr=', '--column', '--vimgrep', '--heading', '--no-heading', '--stats', '--trim',
    '--multiline', '--pcre2', '--max-columns=', '--no-messages', '--null', '--unrestricted', '--replace=',
  ],
  patterns: [NUMBER],
  patternFirst: true,
  // `--files` lists the files it would search and `--type-list` the types: every operand is a path.
  noPattern: ['-e', '--regexp', '--files', '--type-list'],
}

// `git log`, `diff` and `show` share most flags. Not here: `--output` (writes a file),
// `--ext-diff` (runs a program), `--no-index` (compares paths outside the repository),
// `-O` (reads an order file), `--submodule` (reads the submodules' repositories).
// `-U`, `-M`, `-C`, `-B` and the `[=]` flags take a value only when attached: git reads
// `git diff -U /x a` as two paths to compare (outside a repository, or with a path outside
// it, `git diff` compares files like `--no-index`).
const GIT_HISTORY = [
  '--oneline', '--stat[=]', '--shortstat', '--numstat', '--dirstat[=]', '--name-only', '--name-status', '--graph',
  '--decorate[=]', '--no-decorate', '--all', '--branches[=]', '--tags[=]', '--remotes[=]', '--reverse',
  '--first-parent', '--no-merges', '--merges', '--patch', '--no-patch', '--cached', '--staged', '--color[=]',
  '--no-color', '--abbrev-commit', '--no-abbrev-commit', '--abbrev[=]', '--raw', '--summary', '--compact-summary',
  '--word-diff[=]', '--color-words[=]', '--ignore-all-space', '--ignore-space-change', '--ignore-blank-lines',
  '--minimal', '--patience', '--histogram', '--diff-algorithm=', '--follow', '--date=', '--pretty[=]', '--format=',
  '--since=', '--until=', '--after=', '--before=', '--author=', '--committer=', '--grep=', '--max-count=', '--skip=',
  '--unified[=]', '--relative[=]', '--diff-filter=', '--no-ext-diff', '--no-textconv', '--source', '--left-right',
  '--boundary', '--topo-order', '--date-order', '--author-date-order', '--full-history', '--simplify-by-decoration',
  '--ancestry-path', '--no-renames', '--find-renames[=]', '--find-copies[=]', '--check', '--exit-code', '--quiet',
  '--full-index', '--binary', '--no-prefix', '--src-prefix=', '--dst-prefix=', '--show-signature', '--mailmap',
  '--use-mailmap', '--invert-grep', '--all-match', '--regexp-ignore-case', '--extended-regexp', '--fixed-strings',
  '--perl-regexp', '--merge-base', '--function-context', '--expand-tabs[=]', '--no-expand-tabs', '--notes[=]',
  '--no-notes', '--encoding=', '--walk-reflogs', '--cherry-pick', '--cherry-mark', '--cherry', '--left-only',
  '--right-only', '--count', '--parents', '--children', '--log-size', '--dd', '--remerge-diff', '--diff-merges=',
  '--no-diff-merges', '--combined-all-paths', '--line-prefix=', '--ignore-submodules[=]',
  '--stat-width=', '--stat-count=', '--inter-hunk-context=', '--anchored=', '--ignore-cr-at-eol',
  '--ignore-space-at-eol', '--text', '--irreversible-delete', '--pickaxe-all', '--pickaxe-regex', '--exclude=',
]

const GIT_HISTORY_SPEC: ArgumentSpec = {
  short: 'puswbzRDaiEFtPWcmrv',
  shortValue: 'nSGLlI',
  shortOptional: 'UMCB',
  long: GIT_HISTORY,
  patterns: [NUMBER],
}

const listing = (flag: string) => (flags: ReadonlySet<string>, operands: readonly string[]) =>
  operands.length && !flags.has(flag) && !flags.has('--list') ? `with a name and without \`${flag}\`, it creates one` : undefined

/** `git` subcommands that only read the repository, with the flags allowed for each. */
export const GIT_SUBCOMMANDS: ReadonlyMap<string, ArgumentSpec> = new Map<string, ArgumentSpec>([
  ['status', { short: 'sbvz', shortOptional: 'u', long: ['--short', '--branch', '--long', '--porcelain[=]', '--untracked-files[=]', '--ignored[=]', '--ahead-behind', '--no-ahead-behind', '--show-stash', '--verbose', '--renames', '--no-renames', '--column[=]', '--no-column'] }],
  ['log', GIT_HISTORY_SPEC],
  ['diff', GIT_HISTORY_SPEC],
  ['show', GIT_HISTORY_SPEC],
  ['shortlog', { short: 'nsec', long: ['--numbered', '--summary', '--email', '--committer', '--group=', '--format=', '--since=', '--until=', '--all', '--no-merges'] }],
  // `--abbrev` takes its value only attached: `git branch --abbrev new` creates `new`.
  ['branch', { short: 'arvl', long: ['--all', '--remotes', '--verbose', '--list', '--show-current', '--merged[?]', '--no-merged[?]', '--contains[?]', '--no-contains[?]', '--points-at=', '--sort=', '--format=', '--color[=]', '--no-color', '--column[=]', '--no-column', '--abbrev[=]', '--no-abbrev', '--ignore-case'], check: listing('-l') }],
  ['tag', { short: 'l', shortOptional: 'n', long: ['--list', '--sort=', '--contains[?]', '--no-contains[?]', '--merged[?]', '--no-merged[?]', '--points-at[?]', '--format=', '--column[=]', '--no-column', '--ignore-case'], check: listing('-l') }],
  ['rev-parse', { short: 'q', long: ['--show-toplevel', '--show-prefix', '--show-cdup', '--git-dir', '--git-common-dir', '--absolute-git-dir', '--is-inside-work-tree', '--is-inside-git-dir', '--is-bare-repository', '--is-shallow-repository', '--abbrev-ref[=]', '--short[=]', '--verify', '--quiet', '--symbolic', '--symbolic-full-name', '--all', '--branches[=]', '--tags[=]', '--remotes[=]', '--show-object-format[=]', '--default='] }],
  ['ls-files', { short: 'cdmoiskzutv', shortValue: 'x', long: ['--cached', '--deleted', '--modified', '--others', '--ignored', '--stage', '--killed', '--unmerged', '--directory', '--no-empty-directory', '--exclude-standard', '--exclude=', '--full-name', '--abbrev[=]', '--eol', '--format=', '--error-unmatch', '--deduplicate', '--sparse'] }],
  ['ls-tree', { short: 'rdtlz', long: ['--name-only', '--name-status', '--object-only', '--full-name', '--full-tree', '--long', '--abbrev[=]', '--format='] }],
  ['blame', { short: 'bcflnpstew', shortValue: 'L', shortOptional: 'MC', long: ['--porcelain', '--line-porcelain', '--incremental', '--show-name', '--show-number', '--show-email', '--root', '--show-stats', '--date=', '--abbrev[=]', '--color-lines', '--color-by-age', '--ignore-rev=', '--minimal', '--reverse', '--first-parent'] }],
  ['grep', { short: 'ainlLcvwxEFGPhHoqzI', shortValue: 'eABCm', long: ['--cached', '--untracked', '--ignore-case', '--line-number', '--files-with-matches', '--files-without-match', '--count', '--invert-match', '--word-regexp', '--line-regexp', '--extended-regexp', '--fixed-strings', '--basic-regexp', '--perl-regexp', '--only-matching', '--quiet', '--heading', '--break', '--show-function', '--function-context', '--max-depth=', '--max-count=', '--after-context=', '--before-context=', '--context=', '--color[=]', '--no-color', '--column', '--full-name', '--all-match', '--and', '--or', '--not', '--threads=', '--no-textconv', '--exclude-standard', '--no-exclude-standard'], patterns: [NUMBER], patternFirst: true, noPattern: ['-e'] }],
  ['remote', { short: 'v', long: ['--verbose'], maxOperands: 0 }],
  ['describe', { long: ['--tags', '--all', '--long', '--always', '--abbrev[=]', '--exact-match', '--contains', '--first-parent', '--match=', '--exclude=', '--dirty[=]'] }],
  ['cat-file', { short: 'tpse' }],
  ['show-ref', { long: ['--heads', '--tags', '--head', '--verify', '--hash[=]', '--abbrev[=]', '--quiet', '--dereference'] }],
  ['merge-base', { long: ['--all', '--octopus', '--independent', '--is-ancestor', '--fork-point'] }],
  ['rev-list', { shortValue: 'n', long: [...GIT_HISTORY, '--objects'], patterns: [NUMBER] }],
])

// Global options git accepts before the subcommand. Not here: `-c` and `--config-env`
// (a config value such as core.pager or core.fsmonitor runs a program), `-C`, `--git-dir`
// and `--work-tree` (another repository), `--exec-path`.
const GIT_GLOBAL = new Set(['--no-pager', '-P', '--no-optional-locks', '--no-replace-objects', '--literal-pathspecs', '--glob-pathspecs', '--noglob-pathspecs', '--icase-pathspecs'])

/** `git` subcommands that only read, when the repository is one the model cannot have written (`paths.repository()`). */
function git(args: readonly string[], paths: PathOperands = lexicalPathOperands): string | undefined {
  let i = 0
  while (i < args.length && args[i].startsWith('-')) {
    if (!GIT_GLOBAL.has(args[i])) {
      return args[i] === '-c' || args[i].startsWith('--config') ? `\`git ${args[i]}\` can set options that run programs` : `\`git ${args[i]}\` is not on the read-only list`
    }
    i++
  }
  const sub = args[i]
  if (sub === undefined) return undefined
  const spec = GIT_SUBCOMMANDS.get(sub)
  if (!spec) return `\`git ${sub}\` is not on the read-only list`
  // `git stash list` is the only read among stash's subcommands, so it is not here.
  return checkArguments(`git ${sub}`, spec, args.slice(i + 1), paths) ?? paths.repository()
}

// find's expression: tests and `-print` only. Not here: `-exec`, `-execdir`, `-ok`,
// `-okdir` (run programs), `-delete`, `-fprint*`, `-fls` (write), `-L`, `-follow`.
export const FIND_FLAGS: ReadonlySet<string> = new Set(['-P', '-H', '-print', '-print0', '-prune', '-not', '-o', '-or', '-a', '-and', '-empty', '-readable', '-executable', '-true', '-false', '-depth', '-xdev', '-mount', '-nowarn', '-daystart', '-ls', '-quit', '(', ')', '!', ','])
export const FIND_TESTS: ReadonlySet<string> = new Set(['-name', '-iname', '-path', '-ipath', '-wholename', '-iwholename', '-regex', '-iregex', '-regextype', '-type', '-xtype', '-maxdepth', '-mindepth', '-size', '-mtime', '-mmin', '-atime', '-amin', '-ctime', '-cmin', '-newer', '-perm', '-user', '-group', '-uid', '-gid', '-links', '-inum', '-samefile', '-lname', '-ilname', '-printf', '-fstype', '-used', '-newermt'])

const FIND_FILE_TESTS = new Set(['-newer', '-samefile'])

function find(args: readonly string[], paths: PathOperands = lexicalPathOperands): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    if (FIND_TESTS.has(arg)) {
      if (++i >= args.length) return `\`find ${arg}\` needs a value`
      // Their value is a file find looks at.
      if (FIND_FILE_TESTS.has(arg)) {
        const violation = paths.check(args[i])
        if (violation !== undefined) return violation
      }
    } else if (FIND_FLAGS.has(arg)) {
      continue
    } else if (arg.startsWith('-')) {
      return `\`find ${arg}\` is not on the read-only list`
    } else {
      const violation = paths.check(arg)
      if (violation !== undefined) return violation
    }
  }
  return undefined
}

// `date` with an operand other than +FORMAT, or with -s, sets the clock.
const DATE: ArgumentSpec = {
  short: 'uR',
  shortValue: 'dr',
  shortOptional: 'I',
  long: ['--utc', '--universal', '--date=', '--reference=', '--rfc-email', '--rfc-3339=', '--iso-8601[=]'],
  // `-r FILE` shows the file's time. No `-f` (reads dates from a file, and echoes bad ones).
  pathValues: ['-r', '--reference'],
  pathOperands: false,
  check: (_, operands) => operands.some((operand) => !operand.startsWith('+')) ? '`date` with an operand sets the clock' : undefined,
}

// No `-c`/`--check`: it opens every path named in the list file, which no operand shows.
const SUMS: ArgumentSpec = { short: 'btz', long: ['--binary', '--tag', '--text', '--zero'] }

const specs = new Map<string, ArgumentSpec>()

/** The argument spec of each listed program that has one (not `git`, `find`, `echo`, …), for tests against the real programs. */
export const READ_SPECS: ReadonlyMap<string, ArgumentSpec> = specs

const named = (program: string, value: ArgumentSpec): ReadRule => {
  specs.set(program, value)
  return (args, paths) => checkArguments(program, value, args, paths)
}

// diff follows links inside the directories it compares, recursive or not, unless told not to.
const diffFollowsLinks = (flags: ReadonlySet<string>, operands: readonly string[], paths: PathOperands) =>
  !flags.has('--no-dereference') && (flags.has('-r') || flags.has('--recursive') || operands.some((operand) => paths.isDirectory(operand)))
    ? '`diff` on directories follows symbolic links in them; add `--no-dereference`'
    : undefined

/**
 * The closed list of read-only programs and the arguments each may take. A program not in
 * this table, or an argument its rule does not list, makes a command line `exec`.
 */
export const READ_COMMANDS: ReadonlyMap<string, ReadRule> = new Map<string, ReadRule>([
  ['ls', named('ls', { short: 'aAbBcCdfFgGhHiklmnNopqQrRsStuUvxX1Z', shortValue: 'wTI', long: ['--all', '--almost-all', '--human-readable', '--si', '--recursive', '--reverse', '--size', '--sort=', '--time=', '--time-style=', '--color[=]', '--classify[=]', '--file-type', '--directory', '--full-time', '--group-directories-first', '--ignore=', '--ignore-backups', '--inode', '--literal', '--no-group', '--numeric-uid-gid', '--quoting-style=', '--width=', '--format=', '--indicator-style=', '--hide=', '--hyperlink[=]', '--block-size=', '--author', '--escape', '--hide-control-chars', '--show-control-chars', '--context', '--zero'] })],
  ['cat', named('cat', { short: 'AbeEnstTuv', long: ['--show-all', '--number-nonblank', '--show-ends', '--number', '--squeeze-blank', '--show-tabs', '--show-nonprinting'] })],
  ['head', named('head', HEAD)],
  ['tail', named('tail', TAIL)],
  ['wc', named('wc', { short: 'cmlLw', long: ['--bytes', '--chars', '--lines', '--max-line-length', '--words', '--total='] })],
  ['pwd', named('pwd', { short: 'LP', maxOperands: 0 })],
  ['echo', () => undefined],
  ['true', () => undefined],
  ['false', () => undefined],
  ['grep', named('grep', GREP)],
  ['egrep', named('egrep', GREP)],
  ['fgrep', named('fgrep', GREP)],
  ['rg', named('rg', RG)],
  ['find', find],
  ['git', git],
  ['tree', named('tree', { short: 'adfFiCnAsphugDrtvUQNx', shortValue: 'LIP', long: ['--noreport', '--dirsfirst', '--filelimit=', '--charset=', '--prune', '--gitignore', '--matchdirs', '--ignore-case', '--du', '--si', '--sort='] })],
  ['stat', named('stat', { short: 'Lft', shortValue: 'c', long: ['--dereference', '--file-system', '--format=', '--printf=', '--terse'] })],
  ['file', named('file', { short: 'bhiLkrzZNs0', long: ['--brief', '--mime', '--mime-type', '--mime-encoding', '--dereference', '--no-dereference', '--keep-going', '--raw', '--uncompress', '--special-files'] })],
  ['du', named('du', { short: 'achksmHSxb0', shortValue: 'dtB', long: ['--all', '--apparent-size', '--total', '--human-readable', '--si', '--summarize', '--max-depth=', '--threshold=', '--block-size=', '--bytes', '--count-links', '--exclude=', '--one-file-system', '--time[=]', '--inodes'] })],
  ['df', named('df', { short: 'ahHiklPT', shortValue: 'tBx', long: ['--all', '--human-readable', '--si', '--inodes', '--local', '--portability', '--print-type', '--type=', '--exclude-type=', '--output[=]', '--total', '--block-size='] })],
  ['which', named('which', { short: 'a' })],
  ['whoami', named('whoami', { maxOperands: 0 })],
  ['uname', named('uname', { short: 'asnrvmpio', long: ['--all', '--kernel-name', '--nodename', '--kernel-release', '--kernel-version', '--machine', '--processor', '--hardware-platform', '--operating-system'], maxOperands: 0 })],
  ['date', named('date', DATE)],
  ['basename', named('basename', { short: 'asz', shortValue: 'S', long: ['--multiple', '--suffix=', '--zero'], pathOperands: false })],
  ['dirname', named('dirname', { short: 'z', long: ['--zero'], pathOperands: false })],
  ['realpath', named('realpath', { short: 'emLPqsz', long: ['--canonicalize-existing', '--canonicalize-missing', '--logical', '--physical', '--quiet', '--strip', '--no-symlinks', '--relative-to=', '--relative-base=', '--zero'], pathValues: ['--relative-to', '--relative-base'] })],
  // No `-o` (writes a file) and no `--compress-program` (runs one).
  ['sort', named('sort', { short: 'bdfghiMnRrsuVcCz', shortValue: 'ktS', long: ['--ignore-leading-blanks', '--dictionary-order', '--ignore-case', '--general-numeric-sort', '--human-numeric-sort', '--ignore-nonprinting', '--month-sort', '--numeric-sort', '--random-sort', '--reverse', '--version-sort', '--key=', '--field-separator=', '--stable', '--unique', '--check[=]', '--zero-terminated'] })],
  ['uniq', named('uniq', { short: 'cdDiuz', shortValue: 'fsw', long: ['--count', '--repeated', '--all-repeated[=]', '--ignore-case', '--unique', '--skip-fields=', '--skip-chars=', '--check-chars=', '--zero-terminated', '--group[=]'], maxOperands: 1 })],
  ['cut', named('cut', { short: 'nsz', shortValue: 'bcdf', long: ['--bytes=', '--characters=', '--delimiter=', '--fields=', '--complement', '--only-delimited', '--output-delimiter=', '--zero-terminated'] })],
  ['tr', named('tr', { short: 'cCdst', long: ['--complement', '--delete', '--squeeze-repeats', '--truncate-set1'], pathOperands: false })],
  ['nl', named('nl', { short: 'p', shortValue: 'bdfhilnsvw', long: ['--body-numbering=', '--number-width=', '--number-separator=', '--number-format='] })],
  ['diff', named('diff', { short: 'qsuceyNrtTbwBiapdl', shortValue: 'UCxX', long: ['--brief', '--report-identical-files', '--unified[=]', '--context[=]', '--side-by-side', '--new-file', '--recursive', '--expand-tabs', '--ignore-space-change', '--ignore-all-space', '--ignore-blank-lines', '--ignore-case', '--text', '--show-c-function', '--minimal', '--color[=]', '--exclude=', '--width=', '--suppress-common-lines', '--strip-trailing-cr', '--no-dereference'], pathValues: ['-X'], check: diffFollowsLinks })],
  ['cmp', named('cmp', { short: 'blsz', shortValue: 'in', long: ['--print-bytes', '--verbose', '--quiet', '--silent', '--ignore-initial=', '--bytes='] })],
  ['md5sum', named('md5sum', SUMS)],
  ['sha1sum', named('sha1sum', SUMS)],
  ['sha256sum', named('sha256sum', SUMS)],
  ['sha512sum', named('sha512sum', SUMS)],
])
