import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { classifyCommand } from '../src/classify-command'
import { detectWrites } from '../src/detect-writes'
import { splitCommandLine } from '../src/split-command-line'

// [command line, effect, a fragment of the reason when exec]
const TABLE: [string, 'read' | 'exec', string?][] = [
  ['ls', 'read'],
  ['ls -la src', 'read'],
  ['pwd', 'read'],
  ['cat README.md', 'read'],
  ['head -n 20 src/index.ts', 'read'],
  ['head -20 a.txt', 'read'],
  ['tail -n5 log.txt', 'read'],
  ['wc -l src/a.ts src/b.ts', 'read'],
  ['echo hello world', 'read'],
  ['grep -rn "TODO" src', 'read'],
  ["grep -e foo -e '/bar' src", 'read'],
  ['git status', 'read'],
  ['git status --porcelain=v2 -b', 'read'],
  ['git log --oneline -5', 'read'],
  ['git log --format=%H%x09%s -n 3 main..HEAD', 'read'],
  ['git diff HEAD~1 -- src', 'read'],
  ['git diff --stat', 'read'],
  ['git show HEAD@{1}', 'read'],
  ['git --no-pager log -p', 'read'],
  ['git branch -a', 'read'],
  ['git tag --list v1*', 'exec', 'glob `*`'],
  ['git tag -l v1.0', 'read'],
  ["find . -name '*.ts' -type f", 'read'],
  ['ls -la | wc -l', 'read'],
  ['git status && git diff', 'read'],
  ['cat a.txt; cat b.txt', 'read'],
  ['ls\nwc -l a', 'read'],
  ["sort -n data.txt | uniq -c | head -5", 'read'],
  // Tricky ones.
  ['git -c core.pager=less log', 'exec', '`git -c` can set options that run programs'],
  ['git -c alias.x=!rm log', 'exec', 'history or negation'],
  ["git -c core.fsmonitor=/tmp/x status", 'exec', '`git -c`'],
  ['git --config-env=core.pager=X log', 'exec', 'can set options'],
  ['git -C /tmp status', 'exec', '`git -C` is not on the read-only list'],
  ['git diff --output=out.patch', 'exec', '`git diff --output`'],
  ['git diff --ext-diff', 'exec', '`git diff --ext-diff`'],
  ['git branch new-feature', 'exec', 'creates one'],
  ['git tag v2', 'exec', 'creates one'],
  ['git commit -m x', 'exec', '`git commit` is not on the read-only list'],
  ['git push', 'exec', '`git push`'],
  ["find . -exec rm '{}' ';'", 'exec', '`find -exec`'],
  ["find . -name x -delete", 'exec', '`find -delete`'],
  ["find . -fprint out.txt", 'exec', '`find -fprint`'],
  ['find / -name passwd', 'exec', 'outside the working directory'],
  ['cat x > y', 'exec', 'redirection `>`'],
  ['cat x >> y', 'exec', 'redirection `>`'],
  ['cat < /etc/passwd', 'exec', 'redirection `<`'],
  ['cat /etc/passwd', 'exec', '`/etc/passwd` is outside the working directory'],
  ['cat ../secret', 'exec', 'outside the working directory'],
  ['cat ~/.ssh/id_rsa', 'exec', 'home directory expansion'],
  ['ls $(rm -rf x)', 'exec', 'expansion `$`'],
  ['echo `rm x`', 'exec', 'command substitution'],
  ['echo "$HOME"', 'exec', 'inside double quotes'],
  ['(ls)', 'exec', 'subshell'],
  ['ls &', 'exec', 'background job'],
  ['ls & rm x', 'exec', 'background job'],
  ['ls |& cat', 'exec', 'operator'],
  ['ls *.ts', 'exec', 'glob `*`'],
  ['ls | sh', 'exec', '`sh` is not on the read-only list'],
  ['ls && rm -rf /', 'exec', '`rm` is not on the read-only list'],
  ['ls ||', 'exec', 'ends with `||`'],
  ['| ls', 'exec', 'empty command'],
  ['FOO=1 ls', 'exec', 'not a plain program name'],
  ['./ls', 'exec', 'not a plain program name'],
  ['/bin/ls', 'exec', 'not a plain program name'],
  ['tail -f log.txt', 'exec', '`tail -f`'],
  ['sort -o out.txt in.txt', 'exec', '`sort -o`'],
  ['uniq in.txt out.txt', 'exec', 'more than 1 operand'],
  ['date -s 2020-01-01', 'exec', '`date -s`'],
  ['date +%Y', 'read'],
  ['rg --pre cat foo', 'exec', '`rg --pre`'],
  ['tree -o out.txt', 'exec', '`tree -o`'],
  ["echo 'unterminated", 'exec', 'unterminated quote'],
  ['ls \\; rm x', 'exec', 'escape'],
  ['sed -i s/a/b/ f', 'exec', '`sed` is not on the read-only list'],
  ['', 'exec', 'empty command'],
  ['constructor', 'exec', '`constructor` is not on the read-only list'],
  ['__proto__', 'exec', 'not a plain program name'],
  ['hasOwnProperty', 'exec', '`hasOwnProperty` is not on the read-only list'],
  // Issue 25: values taken only when attached, options that read lists, old-style tail.
  ['git diff -U5 HEAD', 'read'],
  ['git diff -U /etc/passwd a.txt', 'exec', 'outside the working directory'],
  ['git diff --unified /etc/passwd a.txt', 'exec', 'outside the working directory'],
  ['git diff --unified=5 -M50% -C -B20%/60% a.txt', 'read'],
  ['git diff -O order.txt', 'exec', '`git diff -O`'],
  ['git diff --submodule=diff', 'exec', '`git diff --submodule`'],
  ['git status -uno', 'read'],
  ['git status -u no', 'read'],
  ['git branch --abbrev new', 'exec', 'creates one'],
  ['git branch --contains HEAD', 'read'],
  ['git tag -n5 -l', 'read'],
  ['git grep --recurse-submodules x', 'exec', '`git grep --recurse-submodules`'],
  ['git rev-list -n 5 HEAD', 'read'],
  ['rg --files /etc', 'exec', 'outside the working directory'],
  ['rg --files src', 'read'],
  ['rg -e x /etc', 'exec', 'outside the working directory'],
  ['rg /etc src', 'read'],
  ['tail +1f log.txt', 'exec', 'old-style `+N`'],
  ['tail -n +2 log.txt', 'read'],
  ['md5sum -c sums.txt', 'exec', '`md5sum -c`'],
  ['sha256sum --check sums.txt', 'exec', '`sha256sum --check`'],
  ['sha256sum a.txt', 'read'],
  ['date -r /etc/passwd', 'exec', 'outside the working directory'],
  ['date --reference=/etc/passwd', 'exec', 'outside the working directory'],
  ['find . -newer /etc/passwd', 'exec', 'outside the working directory'],
  ['diff -X /etc/passwd a b', 'exec', 'outside the working directory'],
  ['realpath --relative-to=/etc a', 'exec', 'outside the working directory'],
  ['df -x tmpfs', 'read'],
]

describe('classifyCommand', () => {
  it.each(TABLE)('%j is %s', (command, effect, reason) => {
    const result = classifyCommand(command)
    expect(result.effect).toBe(effect)
    if (effect === 'read') expect(result.reason).toBeUndefined()
    else expect(result.reason).toContain(reason)
  })

  it('reports what an exec command line appears to write, for the approval prompt', () => {
    expect(classifyCommand('cat x > y').writes).toEqual(['writes "y" (redirection >)'])
    expect(classifyCommand('printf x > ../outside.txt 2>/dev/null').writes).toEqual(['writes "../outside.txt" (redirection >)'])
    expect(classifyCommand('make 2>&1 | tee build.log').writes).toEqual(['writes "build.log"'])
    expect(classifyCommand('cp a b && mv c d; ln -s /outside target').writes).toEqual(['writes "b"', 'moves "c"', 'writes "d"', 'creates a link at "target"'])
    expect(classifyCommand('rm -rf build dist').writes).toEqual(['deletes "build"', 'deletes "dist"'])
    expect(classifyCommand("sudo sed -i 's/a/b/' 'my file'").writes).toEqual(['edits "my file" in place'])
    expect(classifyCommand('echo hi &>> all.log').writes).toEqual(['writes "all.log" (redirection &>>)'])
    expect(classifyCommand('git push').writes).toEqual([])
  })
})

describe('classifyCommand: path operands judged on disk', () => {
  // base/ws is the workspace; base/outside and base/ws-evil lie beside it.
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'dogu-classify-')))
  const workspace = join(base, 'ws')
  for (const dir of ['ws/dir', 'ws/sub', 'outside', 'ws-evil']) mkdirSync(join(base, dir), { recursive: true })
  for (const file of ['ws/dir/a.txt', 'outside/secret', 'ws-evil/secret']) writeFileSync(join(base, file), 'x')
  const links: [string, string][] = [
    ['etc', '../outside'], // a directory outside
    ['secret', '../outside/secret'], // a file outside
    ['evil', join(base, 'ws-evil')], // a sibling whose name starts with the workspace's
    ['inner', 'dir'], // a directory inside
    ['inner-file', 'dir/a.txt'], // a file inside
    ['sub/up', '..'], // the workspace itself
    ['dangling', 'nowhere'],
    ['dangling-out', '../outside/nowhere'],
    ['loop', 'loop'],
  ]
  for (const [path, target] of links) symlinkSync(target, join(workspace, path))
  afterAll(() => rmSync(base, { recursive: true, force: true }))

  const OUT = 'leads outside the workspace through a symbolic link'
  it.each([
    ['cat etc/secret', 'exec', '`etc/secret` ' + OUT],
    ['ls etc', 'exec', OUT],
    ['cat secret', 'exec', OUT],
    ['cat evil/secret', 'exec', OUT],
    ['cat etc/missing/new', 'exec', OUT],
    ['cat dangling', 'exec', OUT],
    ['cat dangling/x', 'exec', OUT],
    ['cat dangling-out', 'exec', OUT],
    ['cat loop', 'exec', OUT],
    ['head -n 5 dir/a.txt etc/secret', 'exec', OUT],
    ['grep -rn x etc', 'exec', OUT],
    ['find etc -name x', 'exec', OUT],
    ['git diff -- etc', 'exec', OUT],
    ['ls | wc -l && cat secret', 'exec', OUT],
    ['cat inner/../etc/secret', 'exec', 'outside the working directory'],
    ['cat inner/a.txt inner-file', 'read'],
    ['ls -la inner sub/up sub/up/dir', 'read'],
    ['cat missing/new.txt', 'read'],
    ['cat dir/a.txt/x', 'read'],
    ['grep etc dir', 'read'],
    // Flags that follow links met inside a directory.
    ['grep -R x .', 'exec', '`grep -R`'],
    ['grep --dereference-recursive x .', 'exec', '`grep --dereference-recursive`'],
    ['rg -L x', 'exec', '`rg -L`'],
    ['rg --follow x', 'exec', '`rg --follow`'],
    ['find -L . -name x', 'exec', '`find -L`'],
    ['find . -follow', 'exec', '`find -follow`'],
    ['tree -l', 'exec', '`tree -l`'],
    ['du -L .', 'exec', '`du -L`'],
    ['ls -RL', 'exec', '`ls -L`'],
    ['diff -r dir sub', 'exec', '`diff` on directories follows symbolic links'],
    ['diff dir sub', 'exec', '`diff` on directories follows symbolic links'],
    ['diff -r --no-dereference dir sub', 'read'],
    ['diff dir/a.txt inner-file', 'read'],
    ['grep -r x .', 'read'],
    ['find . -name x', 'read'],
  ] as const)('%j is %s', (command, effect, reason?: string) => {
    const result = classifyCommand(command, { workspace })
    expect([result.effect, result.reason]).toEqual([effect, effect === 'read' ? undefined : expect.stringContaining(reason!)])
  })

  it('resolves operands against the working directory, which must itself be inside', () => {
    expect(classifyCommand('cat a.txt', { workspace, cwd: 'dir' }).effect).toBe('read')
    expect(classifyCommand('cat secret', { workspace, cwd: 'inner' }).effect).toBe('read')
    expect(classifyCommand('cat secret', { workspace, cwd: 'sub/up' }).reason).toContain(OUT)
    expect(classifyCommand('cat secret', { workspace, cwd: 'etc' }).reason).toBe('the working directory is not a directory inside the workspace')
    expect(classifyCommand('cat x', { workspace, cwd: 'missing' }).reason).toBe('the working directory is not a directory inside the workspace')
  })
})

describe('detectWrites', () => {
  it('is best effort: writes through variables or scripts stay invisible', () => {
    expect(detectWrites('f=out.txt; echo x > "$f"')).toEqual(['writes "$f" (redirection >)'])
    expect(detectWrites('bash ./script.sh')).toEqual([])
    expect(detectWrites('cat < in.txt')).toEqual([])
  })
})

describe('splitCommandLine', () => {
  it('splits at separators and removes quotes', () => {
    expect(splitCommandLine(`grep -n 'a b' "c d" | wc -l && echo ok;ls`)).toEqual({
      ok: true,
      commands: [['grep', '-n', 'a b', 'c d'], ['wc', '-l'], ['echo', 'ok'], ['ls']],
    })
  })

  it('keeps literal ~, # and @{…} inside words', () => {
    expect(splitCommandLine('git log HEAD~2 a#b HEAD@{1}')).toEqual({ ok: true, commands: [['git', 'log', 'HEAD~2', 'a#b', 'HEAD@{1}']] })
    expect(splitCommandLine('echo a=~/x')).toEqual({ ok: false, reason: 'home directory expansion `~`' })
    expect(splitCommandLine('ls #comment')).toEqual({ ok: false, reason: 'comment `#`' })
  })
})
