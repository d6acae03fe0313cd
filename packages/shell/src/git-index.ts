const GITLINK = 0o160000
const TYPE_MASK = 0o170000

/**
 * The paths of the submodules (gitlink entries) recorded in a git index file, versions 2
 * to 4, or `undefined` when it cannot be read completely: a split index (its `link`
 * extension names a second file), a version this reader does not know, or a truncated
 * file. `hashSize` is 20 for SHA-1 repositories and 32 for SHA-256 ones.
 */
export function gitlinkPaths(data: Uint8Array, hashSize: number): string[] | undefined {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength)
  if (data.length < 12 + hashSize || ascii(data, 0, 4) !== 'DIRC') return undefined
  const version = view.getUint32(4)
  if (version < 2 || version > 4) return undefined
  const count = view.getUint32(8)
  const end = data.length - hashSize
  const links: string[] = []
  const decoder = new TextDecoder()
  let offset = 12
  let previous: Uint8Array = new Uint8Array(0)
  for (let n = 0; n < count; n++) {
    const fixed = 40 + hashSize + 2
    if (offset + fixed > end) return undefined
    const mode = view.getUint32(offset + 24)
    const flags = view.getUint16(offset + 40 + hashSize)
    let cursor = offset + fixed
    if (flags & 0x4000) {
      if (version < 3) return undefined
      cursor += 2
    }
    let name: Uint8Array
    if (version === 4) {
      // The name is the previous one less `strip` bytes, plus a NUL-terminated suffix.
      let byte = data[cursor++]
      let strip = byte & 0x7f
      while (byte & 0x80) {
        if (cursor >= end) return undefined
        byte = data[cursor++]
        strip = ((strip + 1) << 7) | (byte & 0x7f)
      }
      if (strip > previous.length) return undefined
      const nul = data.indexOf(0, cursor)
      if (nul < 0 || nul >= end) return undefined
      name = new Uint8Array(previous.length - strip + nul - cursor)
      name.set(previous.subarray(0, previous.length - strip))
      name.set(data.subarray(cursor, nul), previous.length - strip)
      offset = nul + 1
    } else {
      const nul = data.indexOf(0, cursor)
      if (nul < 0 || nul >= end) return undefined
      name = data.subarray(cursor, nul)
      // Entries are padded with NULs to a multiple of eight bytes.
      offset += (cursor - offset + name.length + 8) & ~7
    }
    previous = name
    if ((mode & TYPE_MASK) === GITLINK) links.push(decoder.decode(name))
  }
  // Extensions: a four-byte signature and a four-byte size each.
  while (offset + 8 <= end) {
    if (ascii(data, offset, 4) === 'link') return undefined
    offset += 8 + view.getUint32(offset + 4)
  }
  return offset === end ? links : undefined
}

function ascii(data: Uint8Array, start: number, length: number): string {
  return String.fromCharCode(...data.subarray(start, start + length))
}
