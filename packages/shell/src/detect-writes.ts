type Token = { op: string } | { word: string }

// Targets that are not files in the workspace.
const HARMLESS_TARGETS = /^\/dev\/(null|stdout|stderr|tty|fd\/\d+)$/

const lastOperand = (verb: string) => (operands: string[]) => operands.length > 1 ? [`${verb} "${operands.at(-1)}"`] : []
const everyOperand = (verb: string) => (operands: string[]) => operands.map((operand) => `${verb} "${operand}"`)

/** Programs that commonly write, and which of their operands they write to. */
const WRITERS = new Map<string, (operands: string[], args: string[]) => string[]>([
  ['tee', everyOperand('writes')],
  ['cp', lastOperand('writes')],
  ['install', lastOperand('writes')],
  ['mv', (operands) => operands.length > 1 ? [...operands.slice(0, -1).map((source) => `moves "${source}"`), `writes "${operands.at(-1)}"`] : []],
  ['ln', lastOperand('creates a link at')],
  ['rm', everyOperand('deletes')],
  ['rmdir', everyOperand('deletes')],
  ['unlink', everyOperand('deletes')],
  ['shred', everyOperand('destroys')],
  ['mkdir', everyOperand('creates')],
  ['touch', everyOperand('touches')],
  ['truncate', everyOperand('truncates')],
  ['chmod', (operands) => operands.slice(1).map((operand) => `changes the mode of "${operand}"`)],
  ['chown', (operands) => operands.slice(1).map((operand) => `changes the owner of "${operand}"`)],
  ['dd', (_, args) => args.filter((arg) => arg.startsWith('of=')).map((arg) => `writes "${arg.slice(3)}"`)],
  ['sed', (operands, args) => args.some((arg) => /^-[a-zA-Z]*i|^--in-place/.test(arg)) ? operands.slice(1).map((operand) => `edits "${operand}" in place`) : []],
])

// Input redirections and fd duplications (`2>&1`): the word after them is not written.
const INPUTS = new Set(['<', '<<', '<<<', '<&', '>&'])

// Words that run the next word as the program.
const WRAPPERS = new Set(['sudo', 'env', 'command', 'nice', 'nohup', 'time', 'exec', 'xargs'])

/**
 * Finds redirections and common writing programs (`>`, `>>`, `tee`, `cp`, `mv`, `ln`,
 * `rm`, …) to make an approval prompt specific: "writes out.txt, deletes build".
 *
 * A convenience, not a security boundary: variables, subshells, scripts and programs
 * that write on their own are invisible to it. An empty list proves nothing.
 */
export function detectWrites(command: string): string[] {
  const found = new Set<string>()
  let words: string[] = []
  const flush = () => {
    let start = 0
    while (start < words.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[start]) || WRAPPERS.has(basename(words[start])))) start++
    const program = words[start] && basename(words[start])
    const writer = program ? WRITERS.get(program) : undefined
    if (writer) {
      const args = words.slice(start + 1)
      for (const description of writer(args.filter((arg) => !arg.startsWith('-')), args)) found.add(description)
    }
    words = []
  }
  const tokens = tokenize(command)
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]
    if ('word' in token) {
      words.push(token.word)
    } else if (/^&?>{1,2}\|?$/.test(token.op)) {
      const target = tokens[i + 1]
      if (target && 'word' in target) {
        i++
        if (!HARMLESS_TARGETS.test(target.word)) found.add(`writes "${target.word}" (redirection ${token.op})`)
      }
    } else if (INPUTS.has(token.op)) {
      if (tokens[i + 1] && 'word' in tokens[i + 1]) i++
    } else {
      flush()
    }
  }
  flush()
  return [...found]
}

function basename(word: string) {
  return word.slice(word.lastIndexOf('/') + 1)
}

const OPERATORS = ['&>>', '<<<', '&&', '||', '|&', ';;', '>>', '>|', '>&', '<<', '<&', '&>', '|', '&', ';', '(', ')', '<', '>', '\n']

// A loose tokenizer: quotes and escapes are honoured, expansions are kept as text.
function tokenize(line: string): Token[] {
  const tokens: Token[] = []
  let word = ''
  let inWord = false
  const end = () => {
    if (inWord) tokens.push({ word })
    word = ''
    inWord = false
  }
  for (let i = 0; i < line.length; i++) {
    const char = line[i]
    if (char === ' ' || char === '\t') {
      end()
    } else if (char === '\\') {
      word += line[++i] ?? ''
      inWord = true
    } else if (char === "'" || char === '"') {
      let close = i + 1
      while (close < line.length && line[close] !== char) close += char === '"' && line[close] === '\\' ? 2 : 1
      word += line.slice(i + 1, close)
      inWord = true
      i = close
    } else {
      const op = OPERATORS.find((candidate) => line.startsWith(candidate, i))
      if (!op) {
        word += char
        inWord = true
        continue
      }
      // `2>file`: the digits name a file descriptor, not a word.
      if (op[0] === '>' && /^\d+$/.test(word)) {
        word = ''
        inWord = false
      }
      end()
      tokens.push({ op })
      i += op.length - 1
    }
  }
  end()
  return tokens
}
