import { homedir } from 'node:os'
import { isAbsolute, join, resolve } from 'node:path'

/**
 * Credential and config locations under the home directory: keys, cloud and registry
 * tokens, git credentials, shell history. Hidden inside the sandbox by default.
 */
const HOME_SECRETS = [
  '.ssh', '.gnupg', '.aws', '.azure', '.config', '.docker', '.kube', '.npmrc', '.yarnrc', '.yarnrc.yml',
  '.pypirc', '.netrc', '.gitconfig', '.git-credentials', '.cargo/credentials', '.cargo/credentials.toml',
  '.local/share/keyrings', '.password-store', '.bash_history', '.zsh_history', '.node_repl_history', '.python_history',
  '.mysql_history', '.psql_history', '.pgpass', '.my.cnf',
]

/**
 * System files that only root can read (the sandbox maps a root bot's files to its own
 * uid), and `/run`, where the sockets of docker, D-Bus, systemd and local databases live:
 * a socket is reachable through a read-only mount.
 */
const SYSTEM_SECRETS = ['/etc/shadow', '/etc/gshadow', '/etc/shadow-', '/etc/gshadow-', '/etc/sudoers', '/etc/sudoers.d', '/etc/ssh', '/run', '/var/run']

/** Every path hidden by default, then `extra`; relative entries are taken from the home directory. */
export function hiddenPaths(extra: readonly string[], dataDir: string | undefined, home = homedir()): string[] {
  const paths = [...HOME_SECRETS.map((name) => join(home, name)), ...SYSTEM_SECRETS]
  if (dataDir) paths.push(resolve(dataDir))
  for (const path of extra) paths.push(isAbsolute(path) ? resolve(path) : resolve(home, path))
  return paths
}
