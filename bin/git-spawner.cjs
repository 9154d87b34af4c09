'use strict';
// Starts git processes for a server worker and relays their pipes (src/platform/git/spawner.ts).
//
// Why a process of its own: on Linux, Node starts a child with fork(), which marks every resident page of the
// parent copy-on-write before the child can exec git, and the parent's event loop waits meanwhile. A worker holding
// a few hundred megabytes (page cache, read caches) waited 10-20 ms per git call; this process stays small, so its
// forks cost about a millisecond, and the worker does not wait for them at all.
//
// Messages (the parent's IPC channel, advanced serialisation so that buffers pass as they are):
//   in:  { op: 'spawn', id, file, args, cwd, env }  { op: 'stdin', id, data }  { op: 'end', id }  { op: 'kill', id, signal }
//   out: { op: 'out' | 'err', id, data }  { op: 'error', id, message, code }  { op: 'close', id, code, signal }
// Each child's output is sent in the order git wrote it, and its 'close' only after all of it.
const { spawn } = require('node:child_process');

const children = new Map();
const send = (message) => {
  if (process.connected) process.send(message);
};

process.on('message', (m) => {
  if (!m || typeof m !== 'object') return;
  if (m.op === 'spawn') {
    let child;
    try {
      child = spawn(m.file, m.args, { cwd: m.cwd, env: m.env, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
    } catch (e) {
      send({ op: 'error', id: m.id, message: e.message, code: e.code });
      send({ op: 'close', id: m.id, code: null, signal: null });
      return;
    }
    children.set(m.id, child);
    child.stdout.on('data', (data) => send({ op: 'out', id: m.id, data }));
    child.stderr.on('data', (data) => send({ op: 'err', id: m.id, data }));
    // git may exit before it has read all of its input; that EPIPE is not the interesting error.
    child.stdin.on('error', () => {});
    child.on('error', (e) => send({ op: 'error', id: m.id, message: e.message, code: e.code }));
    child.on('close', (code, signal) => {
      children.delete(m.id);
      send({ op: 'close', id: m.id, code, signal });
    });
  } else if (m.op === 'stdin') {
    children.get(m.id)?.stdin.write(Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength));
  } else if (m.op === 'end') {
    children.get(m.id)?.stdin.end();
  } else if (m.op === 'kill') {
    children.get(m.id)?.kill(m.signal);
  }
});

// A terminal's Ctrl-C and a service manager's SIGTERM reach every process of the group or unit: the helper stays
// while its worker finishes what it serves (the primary tells the workers when to stop), and ends with it.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});

// The worker is gone (it exited, or was killed): its git processes have nobody to answer.
process.on('disconnect', () => {
  for (const child of children.values()) child.kill('SIGKILL');
  process.exit(0);
});
