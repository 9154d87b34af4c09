// pkt-line framing of the git protocol (gitprotocol-common), and the two things the server does with it:
// reading the command list at the head of a receive-pack request, and answering a refused push.
import type { Readable } from 'node:stream';

export const FLUSH = Buffer.from('0000');

export function pkt(data: string | Buffer): Buffer {
  const body = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const len = (body.length + 4).toString(16).padStart(4, '0');
  return Buffer.concat([Buffer.from(len), body]);
}

export interface PushCommand {
  oldSha: string;
  newSha: string;
  ref: string;
}

export interface PushHead {
  commands: PushCommand[];
  capabilities: string[];
  /** Bytes read from the stream so far (they must still reach receive-pack). */
  consumed: Buffer;
}

const MAX_HEAD = 4 * 1024 * 1024;

/**
 * Reads `stream` until `decide` (shown every byte read so far, and whether the stream has ended) returns a value;
 * the rest of the stream stays paused and unread. Resolves with that value and the bytes read, which the reader
 * must pass on (to git) before the rest. `decide` must return a value once the stream has ended.
 */
export function readStreamHead<T>(stream: Readable, decide: (bytes: Buffer, ended: boolean) => T | undefined): Promise<{ value: T; consumed: Buffer }> {
  return new Promise((resolve, reject) => {
    let consumed: Buffer = Buffer.alloc(0);
    let done = false;
    const finish = (value: T) => {
      if (done) return;
      done = true;
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.pause();
      resolve({ value, consumed });
    };
    const onData = (chunk: Buffer) => {
      consumed = consumed.length ? Buffer.concat([consumed, chunk]) : chunk;
      const value = decide(consumed, false);
      if (value !== undefined) finish(value);
    };
    const onEnd = () => finish(decide(consumed, true) as T);
    const onError = (e: Error) => {
      if (done) return;
      done = true;
      reject(e);
    };
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
  });
}

/** The command list of a receive-pack request in `buf`: undefined while incomplete, null when malformed. */
function parsePushHead(buf: Buffer): PushHead | null | undefined {
  const commands: PushCommand[] = [];
  let capabilities: string[] = [];
  let at = 0;
  for (;;) {
    if (buf.length < at + 4) return undefined;
    const lenHex = buf.subarray(at, at + 4).toString('latin1');
    if (!/^[0-9a-f]{4}$/.test(lenHex)) return null;
    const len = parseInt(lenHex, 16);
    if (len === 0) return { commands, capabilities, consumed: buf };
    if (len < 4) return null;
    if (buf.length < at + len) return undefined;
    let line = buf.subarray(at + 4, at + len).toString('utf8');
    at += len;
    if (line.endsWith('\n')) line = line.slice(0, -1);
    if (line.startsWith('shallow ') || line.startsWith('push-cert')) continue;
    const nul = line.indexOf('\0');
    if (nul >= 0) {
      capabilities = line.slice(nul + 1).split(' ').filter(Boolean);
      line = line.slice(0, nul);
    }
    const m = /^([0-9a-f]{40}|[0-9a-f]{64}) ([0-9a-f]{40}|[0-9a-f]{64}) (.+)$/.exec(line);
    if (!m) return null;
    commands.push({ oldSha: m[1], newSha: m[2], ref: m[3] });
  }
}

/**
 * Reads pkt-lines until the flush that ends the command list, leaving the rest of the stream (the pack)
 * unread. Returns null when the stream is not a well-formed receive-pack request.
 */
export async function readPushHead(stream: Readable): Promise<PushHead | null> {
  const { value } = await readStreamHead(stream, (buf, ended) => {
    const head = parsePushHead(buf);
    if (head !== undefined) return head;
    return ended || buf.length > MAX_HEAD ? null : undefined;
  });
  return value;
}

/**
 * The answer to a push refused before receive-pack ran: the messages on the progress band (git prints them
 * as "remote: ..."), then a report that every ref was declined, so no ref moves and the client says why.
 */
export function refusedPushResponse(commands: PushCommand[], capabilities: string[], messages: string[]): Buffer {
  const sideband = capabilities.includes('side-band-64k') || capabilities.includes('side-band');
  const max = capabilities.includes('side-band-64k') ? 65515 : 995;
  const reason = sideband ? 'pre-receive hook declined' : messages.join('; ').replace(/\n/g, ' ');
  const wantsReport = capabilities.includes('report-status') || capabilities.includes('report-status-v2');
  const report = wantsReport
    ? Buffer.concat([pkt('unpack ok\n'), ...commands.map((c) => pkt(`ng ${c.ref} ${reason}\n`)), FLUSH])
    : Buffer.alloc(0);
  if (!sideband) return report;
  const parts: Buffer[] = [];
  const text = Buffer.from(messages.map((m) => `\n${m}\n`).join('') + '\n', 'utf8');
  for (let i = 0; i < text.length; i += max) parts.push(pkt(Buffer.concat([Buffer.from([2]), text.subarray(i, i + max)])));
  for (let i = 0; i < report.length; i += max) parts.push(pkt(Buffer.concat([Buffer.from([1]), report.subarray(i, i + max)])));
  parts.push(FLUSH);
  return Buffer.concat(parts);
}
