/**
 * The variables a scrubbed environment keeps: what programs need to find themselves and
 * print sensibly. Tokens (`DISCORD_TOKEN`, `OPENAI_API_KEY`, `DATABASE_URL`, …) are not
 * among them, so no secret of the bot's reaches the model's commands unless the owner
 * puts it into the plugin's `env` on purpose.
 */
const KEPT = new Set([
  'PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TERM', 'TZ', 'TMPDIR',
  'COLORTERM', 'NO_COLOR', 'COLUMNS', 'LINES', 'PWD',
])

/** `env` reduced to the allowlist and `LC_*`, then `extra` (the plugin's `env`) on top. */
export function scrubEnvironment(env: NodeJS.ProcessEnv, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && (KEPT.has(name) || name.startsWith('LC_'))) out[name] = value
  }
  return Object.assign(out, extra)
}
