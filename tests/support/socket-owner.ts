import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * The command line of the process on the other end of a loopback TCP connection this process accepted (Linux /proc):
 * the socket whose local port is the peer's port and whose remote port is ours, then the process holding it.
 * null when it cannot be found (the peer already closed, or no /proc).
 */
export function loopbackPeerCommand(peerPort: number, ourPort: number): string | null {
  const hex = (n: number) => n.toString(16).toUpperCase().padStart(4, '0');
  let inode: string | undefined;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      if (f[1]!.endsWith(`:${hex(peerPort)}`) && f[2]!.endsWith(`:${hex(ourPort)}`)) inode = f[9];
    }
  }
  if (!inode) return null;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`) return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      } catch {
        // gone meanwhile
      }
    }
  }
  return null;
}
