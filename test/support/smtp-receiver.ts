import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

// A real SMTP server on loopback for the tests that read the e-mails Bellows sends, and the parser of what arrives
// (also used on the `.eml` files of the default transport).

export interface ReceivedMail {
  /** The envelope's recipients. */
  to: string[];
  /** Unfolded headers, names in lower case, encoded words decoded. */
  headers: Map<string, string>;
  text: string;
  html: string;
  raw: string;
}

/** Unfolded headers (names in lower case) and the decoded text and HTML parts of a MIME message. */
export function parseMail(raw: string, to: string[]): ReceivedMail {
  const split = (s: string) => {
    const at = s.indexOf('\r\n\r\n');
    const head = s.slice(0, at).replace(/\r\n[ \t]+/g, ' ');
    const headers = new Map<string, string>();
    for (const line of head.split('\r\n')) {
      const i = line.indexOf(':');
      headers.set(line.slice(0, i).toLowerCase(), line.slice(i + 1).trim());
    }
    return { headers, body: s.slice(at + 4) };
  };
  const top = split(raw);
  const decode = (h: Map<string, string>, body: string) => {
    const enc = (h.get('content-transfer-encoding') ?? '').toLowerCase();
    if (enc === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    if (enc === 'quoted-printable') {
      return Buffer.from(body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_, x) => String.fromCharCode(parseInt(x, 16))), 'latin1').toString('utf8');
    }
    return body;
  };
  let text = '';
  let html = '';
  const boundary = /boundary="?([^";]+)"?/.exec(top.headers.get('content-type') ?? '')?.[1];
  for (const part of boundary ? top.body.split(`--${boundary}`).slice(1, -1) : []) {
    const p = split(part.replace(/^\r\n/, ''));
    const type = p.headers.get('content-type') ?? '';
    if (type.startsWith('text/plain')) text = decode(p.headers, p.body.replace(/\r\n$/, ''));
    if (type.startsWith('text/html')) html = decode(p.headers, p.body.replace(/\r\n$/, ''));
  }
  const decodeWord = (v: string) => v.replace(/=\?UTF-8\?Q\?([^?]*)\?=/gi, (_, q) => Buffer.from(q.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/g, (_m: string, x: string) => String.fromCharCode(parseInt(x, 16))), 'latin1').toString('utf8'));
  for (const [k, v] of top.headers) top.headers.set(k, decodeWord(v));
  return { to, headers: top.headers, text, html, raw };
}

export interface SmtpReceiver {
  port: number;
  /** What arrived, in order. */
  inbox: ReceivedMail[];
  /** Refuses the next `count` messages with a temporary failure (451), then accepts again. */
  refuse(count: number): void;
  /** Empties the inbox and answers what it held. */
  take(): ReceivedMail[];
  close(): Promise<void>;
}

/** Starts an SMTP server on a free loopback port (no authentication, no TLS). */
export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const inbox: ReceivedMail[] = [];
  let refusals = 0;
  const smtp = new SMTPServer({
    authOptional: true, disabledCommands: ['STARTTLS'], logger: false,
    onData(stream, session, done) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (refusals > 0) {
          refusals--;
          const err = new Error('Try again later') as Error & { responseCode: number };
          err.responseCode = 451;
          return done(err);
        }
        inbox.push(parseMail(Buffer.concat(chunks).toString('utf8'), session.envelope.rcptTo.map((r) => r.address)));
        done();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  return {
    port: (smtp.server.address() as AddressInfo).port,
    inbox,
    refuse: (count) => { refusals = count; },
    take: () => inbox.splice(0),
    close: () => new Promise<void>((resolve) => smtp.close(() => resolve())),
  };
}
