import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface Capture {
  /** The end a child writes to: pass it in `stdio`, then destroy it once spawned. */
  childEnd: Socket
  /** Our end; it ends once every copy of the child's end is closed. */
  reader: Socket
}

let counter = 0
let directory: string | undefined
/** Captures being set up; the directory goes away when the last one is connected. */
let opening = 0
let exitHook = false

// A private directory while captures are being set up: a socket path there cannot be
// taken by another user first. Each socket is unlinked as soon as it is connected, and the
// directory is removed when no capture is being set up, so none is left behind.
function socketDirectory(): string {
  if (!directory) {
    directory = mkdtempSync(join(tmpdir(), 'dogu-shell-'))
    if (!exitHook) {
      exitHook = true
      process.once('exit', removeDirectory)
    }
  }
  return directory
}

function removeDirectory() {
  if (!directory) return
  rmSync(directory, { recursive: true, force: true })
  directory = undefined
}

/**
 * A connected Unix socket pair whose reading end fills one reused buffer (`onread`)
 * instead of allocating a Buffer per read. Node's own `stdio: 'pipe'` is a socket pair
 * too, so the child sees the same kind of descriptor; what changes is that a flood
 * (`yes` at hundreds of MB/s) no longer leaves tens of megabytes of dead chunks waiting
 * for the garbage collector.
 */
export async function openCapture(onData: (chunk: Buffer) => void): Promise<Capture> {
  opening++
  const path = join(socketDirectory(), `${++counter}.sock`)
  const server = createServer({ pauseOnConnect: true })
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(path, resolve)
    })
    const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve))
    const buffer = Buffer.allocUnsafe(65536)
    const reader = connect({ path, onread: { buffer, callback: (length: number) => {
      onData(buffer.subarray(0, length))
      return true
    } } })
    await new Promise<void>((resolve, reject) => {
      reader.once('connect', resolve)
      reader.once('error', reject)
    })
    return { childEnd: await accepted, reader }
  } finally {
    // Closing a Unix socket server removes its path; accepted sockets live on.
    server.close(() => {
      if (--opening === 0) removeDirectory()
    })
  }
}
