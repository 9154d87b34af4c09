import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A local HTTP server receiving webhook deliveries in the tests: it records each request's headers and JSON body and
// answers with the status codes it is told to, in turn (200 once they run out).

export interface ReceivedHook {
  headers: http.IncomingHttpHeaders;
  /** The path and query the delivery was made to. */
  path: string;
  body: any;
}

export interface HookReceiver {
  /** `http://127.0.0.1:<port>/hook` */
  url: string;
  /** What arrived, in order. */
  received: ReceivedHook[];
  /** Status codes to answer with, in turn. */
  answers: number[];
  /** Empties `received` and answers what it held. */
  take(): ReceivedHook[];
  close(): Promise<void>;
}

export async function startHookReceiver(): Promise<HookReceiver> {
  const state = { received: [] as ReceivedHook[], answers: [] as number[] };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try { body = JSON.parse(text); } catch { /* kept as text */ }
      state.received.push({ headers: req.headers, path: req.url ?? '', body });
      res.statusCode = state.answers.shift() ?? 200;
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    take: () => state.received.splice(0),
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  });
}
