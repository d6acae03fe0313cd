// Another host for the network allowlist's control: the proxy refuses every address of this
// machine, so an allowlisted address that works must be somebody else's. As root, the test
// makes one: a network namespace joined to this one by a veth pair, with an HTTP server in it.
// Traffic goes only to that namespace.
import { execFileSync, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'

export interface RemoteHost {
  /** `ip:port` of the server in the namespace. */
  address: string
  close(): void
}

/** What the remote's server answers every request with. */
export const REMOTE_BODY = 'dogu-remote-body-5a1c'

let made = 0

/** Makes the namespace and starts its server (root only); resolves once it listens. */
export async function startRemoteHost(): Promise<RemoteHost> {
  const n = ++made
  const name = `dogu-remote-${process.pid}-${n}`
  const outer = `dgr${process.pid % 100000}-${n}`
  // A /30 of TEST-NET-2 per host made, so two at once do not collide.
  const net = ((process.pid * 4 + n) % 64) * 4
  const [here, there] = [`198.51.100.${net + 1}`, `198.51.100.${net + 2}`]
  const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'ignore' })
  const close = () => {
    try {
      ip('link', 'del', outer)
    } catch {}
    try {
      ip('netns', 'del', name)
    } catch {}
  }
  close()
  try {
    ip('netns', 'add', name)
    ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', 'inner', 'netns', name)
    ip('addr', 'add', `${here}/30`, 'dev', outer)
    ip('link', 'set', outer, 'up')
    ip('-n', name, 'addr', 'add', `${there}/30`, 'dev', 'inner')
    ip('-n', name, 'link', 'set', 'inner', 'up')
  } catch (error) {
    close()
    throw error
  }
  const server = spawn('ip', ['netns', 'exec', name, 'python3', '-c', `
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b'${REMOTE_BODY}')
    def log_message(self, *a): pass
s = http.server.HTTPServer(('${there}', 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
`], { stdio: ['ignore', 'pipe', 'inherit'] })
  const port = await new Promise<string>((resolve, reject) => {
    createInterface({ input: server.stdout! }).once('line', resolve)
    server.once('exit', (code) => reject(new Error(`the remote host's server exited (${code})`)))
  }).catch((error) => {
    close()
    throw error
  })
  return {
    address: `${there}:${port}`,
    close() {
      server.kill('SIGKILL')
      close()
    },
  }
}
