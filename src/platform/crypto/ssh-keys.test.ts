import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSshPublicKey, sanitizeSshPublicKey, SshWireReader } from './ssh-keys.ts';
import { DSA_KEY, rsaKey, skEcdsaKey, skEd25519Key, sshString } from '../../../test/support/ssh-key-fixtures.ts';

// Keys made with ssh-keygen; fingerprints as `ssh-keygen -l` and `ssh-keygen -E md5 -l` print them.
const ED25519 = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGMF5+CZg8IAjNfnDh4GUQzbP6QRibUS12ASzMHIhPTs c@ed25519';
const RSA2048 = 'ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQCKq4smDNFEWfHPz3qxI3Yclw93JvfkKLt+PE7iL7yT9pfAjKPrYvz7F0BA19tspymIrTBxmJGeOOLrOJ8jmTXY0ij+9WBg0Cz/PNi2+B35Ke3j9WQGfyBej1pZcnOAdE/1/NGkVXty2b7lviunwNZopi/ZHz4Zt9kSx/7SjspyVlm7Kuup7vsY4ARw9scCr7b5FPl+AH7eUB3VuPE1O0ucjp91qE/JnJEaat8y1ufwaurt4UVFVk0XAxItK1/2M9To8gCHnM8QmxpU/0nOCAb88mmipZOvgh7P3iyDpMrfFBrxYi4L7C+qz+QOiAfF9m303yqx5Nn3dmAKkQKjNi9r c@rsab2048';
const ECDSA256 = 'ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBBxgNwR61s+tFmIOJpovaqQF+vMH+dqYoOeocUDTsrQFxbPMdvwAILmBwKQM+tFy1/r2zK0jOV36dQhPn23/WDg= c@ecdsab256';

test('fingerprints match ssh-keygen', () => {
  const ed = parseSshPublicKey(ED25519)!;
  assert.equal(ed.type, 'ssh-ed25519');
  assert.equal(ed.technology, 'ed25519');
  assert.equal(ed.bits, 256);
  assert.equal(ed.comment, 'c@ed25519');
  assert.equal(ed.fingerprintSha256, 'QmzTMsKOA0fohNAznEONvfVUNMopIAQrpnUrSwCZTno');
  assert.equal(ed.fingerprintMd5, '16:7a:cd:48:22:7e:f0:8e:52:6c:99:7a:e2:c9:9e:a9');
  const rsa = parseSshPublicKey(RSA2048)!;
  assert.equal(rsa.bits, 2048);
  assert.equal(rsa.technology, 'rsa');
  assert.equal(rsa.fingerprintSha256, 'xI8m9FKdHKokm81fOnMvUpkLe/sq61RcVQTLA/3q6Sg');
  assert.equal(rsa.fingerprintMd5, '2d:3c:9f:34:60:b0:ec:a7:c1:93:16:94:ef:00:f9:43');
  const ec = parseSshPublicKey(ECDSA256)!;
  assert.equal(ec.technology, 'ecdsa');
  assert.equal(ec.bits, 256);
  assert.equal(ec.fingerprintSha256, '1MDHAKnnz0pyocH5zlTdDIbdua1WUBDU6hjgGzIWEvM');
});

test('security-key types are read from the wire format', () => {
  const ed = parseSshPublicKey(skEd25519Key())!;
  assert.equal(ed.type, 'sk-ssh-ed25519@openssh.com');
  assert.equal(ed.technology, 'ed25519_sk');
  assert.equal(ed.bits, 256);
  assert.equal(ed.comment, 'sk@example');
  const ec = parseSshPublicKey(skEcdsaKey())!;
  assert.equal(ec.technology, 'ecdsa_sk');
  assert.equal(ec.bits, 256);
  // A point that is not on the curve, a wrong curve name, a truncated blob: all refused.
  const bad = Buffer.alloc(65, 7);
  bad[0] = 4;
  assert.equal(parseSshPublicKey(skEcdsaKey('x', bad)), null);
  const wrongCurve = Buffer.concat([sshString('sk-ecdsa-sha2-nistp256@openssh.com'), sshString('nistp384'), sshString(Buffer.alloc(65, 4)), sshString('ssh:')]);
  assert.equal(parseSshPublicKey(`sk-ecdsa-sha2-nistp256@openssh.com ${wrongCurve.toString('base64')}`), null);
  const blob = Buffer.from(skEd25519Key().split(' ')[1], 'base64');
  assert.equal(parseSshPublicKey(`sk-ssh-ed25519@openssh.com ${blob.subarray(0, blob.length - 3).toString('base64')}`), null);
  const trailing = Buffer.concat([blob, Buffer.from([0])]);
  assert.equal(parseSshPublicKey(`sk-ssh-ed25519@openssh.com ${trailing.toString('base64')}`), null);
});

test('generated RSA keys and the DSA fixture parse with their sizes', () => {
  assert.equal(parseSshPublicKey(rsaKey(1024))!.bits, 1024);
  const dsa = parseSshPublicKey(DSA_KEY)!;
  assert.equal(dsa.technology, 'dsa');
  assert.equal(dsa.bits, 1024);
});

test('the declared type must match the blob, and junk is refused', () => {
  const b64 = ED25519.split(' ')[1];
  assert.equal(parseSshPublicKey(`ssh-rsa ${b64}`), null);
  assert.equal(parseSshPublicKey(`sk-ssh-ed25519@openssh.com ${b64}`), null);
  assert.equal(parseSshPublicKey('ssh-ed25519'), null);
  assert.equal(parseSshPublicKey('ssh-ed25519 !!!notbase64'), null);
  assert.equal(parseSshPublicKey('ssh-ed25519 AAAA'), null);
  assert.equal(parseSshPublicKey(`x-unknown ${b64}`), null);
  assert.equal(parseSshPublicKey(''), null);
  assert.equal(parseSshPublicKey(123 as unknown as string), null);
});

test('sanitising joins a broken base64 and keeps one comment word', () => {
  const [type, b64] = ED25519.split(' ');
  assert.equal(sanitizeSshPublicKey(`  ${type} ${b64.slice(0, 20)}\n${b64.slice(20, 40)} ${b64.slice(40)}  me@host and more\n`), `${type} ${b64} me@host`);
  assert.equal(sanitizeSshPublicKey(`${type} ${b64}`), `${type} ${b64}`);
  assert.equal(sanitizeSshPublicKey('not a key'), 'not a key');
  assert.equal(sanitizeSshPublicKey('single'), 'single');
});

test('sanitising a huge text of many words returns it unchanged, in time linear in its size', () => {
  // Not a speed test: a pattern that backtracks takes about a hundred times longer for ten times the text, a
  // linear one about ten times, whatever else the machine is doing meanwhile.
  const timed = (words: number) => {
    const text = `ssh-ed25519 ${'A '.repeat(words)}`;
    const started = process.hrtime.bigint();
    assert.equal(sanitizeSshPublicKey(text), text);
    assert.equal(parseSshPublicKey(text), null);
    return Number(process.hrtime.bigint() - started);
  };
  timed(50_000);
  const small = Math.min(timed(50_000), timed(50_000));
  const large = timed(500_000);
  assert.ok(large < small * 40, `ten times the text took ${(large / small).toFixed(1)} times as long`);
});

test('wire reader refuses lengths past the end', () => {
  const r = new SshWireReader(Buffer.from([0, 0, 0, 9, 1, 2]));
  assert.throws(() => r.string(), /truncated/);
  assert.throws(() => new SshWireReader(Buffer.from([0, 0])).string(), /truncated/);
});
