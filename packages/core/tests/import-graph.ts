// Core's import graph, read with the TypeScript compiler's parser: every relative import and
// re-export of each .ts file under a folder, type-only ones included (a type cycle is a cycle
// for the reader, if not for the runtime).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'

/** Each file (relative to `root`, `/`-separated) and the files under `root` it imports. */
export function importGraph(root: string): Map<string, Set<string>> {
  const files: string[] = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (path.endsWith('.ts') && !path.endsWith('.d.ts')) files.push(path)
    }
  }
  walk(root)
  const name = (path: string) => relative(root, path).split('\\').join('/')
  const graph = new Map<string, Set<string>>()
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest)
    const imports = new Set<string>()
    for (const node of source.statements) {
      if (!ts.isImportDeclaration(node) && !ts.isExportDeclaration(node)) continue
      const specifier = node.moduleSpecifier
      if (!specifier || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) continue
      const target = resolveModule(file, specifier.text)
      if (target) imports.add(name(target))
    }
    graph.set(name(file), imports)
  }
  return graph
}

function resolveModule(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier)
  for (const candidate of [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate
  }
}

/** The graph's import cycles: its strongly connected components of two files or more, each sorted, files importing themselves too. */
export function importCycles(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  // Tarjan's algorithm.
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const cycles: string[][] = []
  const visit = (file: string) => {
    index.set(file, next)
    low.set(file, next++)
    stack.push(file)
    onStack.add(file)
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target)
        low.set(file, Math.min(low.get(file)!, low.get(target)!))
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!))
      }
    }
    if (low.get(file) !== index.get(file)) return
    const component: string[] = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== file)
    if (component.length > 1 || graph.get(file)?.has(file)) cycles.push(component.sort())
  }
  for (const file of graph.keys()) if (!index.has(file)) visit(file)
  return cycles.sort((a, b) => a[0].localeCompare(b[0]))
}
