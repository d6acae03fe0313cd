import { execFileSync } from 'node:child_process'

/** Node has no mkfifo; the coreutils one makes an "other" entry for list. */
export async function mkfifo(path: string): Promise<void> {
  execFileSync('mkfifo', [path])
}
