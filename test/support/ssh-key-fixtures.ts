import { createECDH, generateKeyPairSync } from 'node:crypto';

// OpenSSH public keys made on the fly, for tests that need keys nobody has used yet.

export function sshString(b: Buffer | string): Buffer {
  const body = typeof b === 'string' ? Buffer.from(b) : b;
  const len = Buffer.alloc(4);
  len.writeUInt32BE(body.length);
  return Buffer.concat([len, body]);
}

function mpint(b: Buffer): Buffer {
  let v = b;
  while (v.length > 1 && v[0] === 0 && !(v[1] & 0x80)) v = v.subarray(1);
  return sshString(v[0] & 0x80 ? Buffer.concat([Buffer.from([0]), v]) : v);
}

export function ed25519Key(comment = 'test@example'): string {
  const raw = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'der' }).subarray(-32);
  return `ssh-ed25519 ${Buffer.concat([sshString('ssh-ed25519'), sshString(raw)]).toString('base64')} ${comment}`;
}

export function rsaKey(bits: number, comment = 'rsa@example'): string {
  const jwk = generateKeyPairSync('rsa', { modulusLength: bits }).publicKey.export({ format: 'jwk' });
  const e = Buffer.from(jwk.e!, 'base64url');
  const n = Buffer.from(jwk.n!, 'base64url');
  return `ssh-rsa ${Buffer.concat([sshString('ssh-rsa'), mpint(e), mpint(n)]).toString('base64')} ${comment}`;
}

export function skEd25519Key(comment = 'sk@example'): string {
  const raw = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'der' }).subarray(-32);
  const blob = Buffer.concat([sshString('sk-ssh-ed25519@openssh.com'), sshString(raw), sshString('ssh:')]);
  return `sk-ssh-ed25519@openssh.com ${blob.toString('base64')} ${comment}`;
}

export function skEcdsaKey(comment = 'sk@example', point?: Buffer): string {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  const q = point ?? ecdh.getPublicKey();
  const blob = Buffer.concat([sshString('sk-ecdsa-sha2-nistp256@openssh.com'), sshString('nistp256'), sshString(q), sshString('ssh:')]);
  return `sk-ecdsa-sha2-nistp256@openssh.com ${blob.toString('base64')} ${comment}`;
}

/** Made with `ssh-keygen -t dsa`: a type the server refuses. */
export const DSA_KEY = 'ssh-dss AAAAB3NzaC1kc3MAAACBAPNgy0d9L0VQvb5rM0s/GznAjfAAoTbQwDxF6wpzrA5uquoNJhiyubGsMCZvWu5Z8nGPAucsCADmFwAhfPwiUkvTcgp3Tc9qo5Ku9zbK65rDJvzT1S57doIaIYHtOR9nEUJP+HJRahSHb5EzifRwetf7C7piRlk8sfSTxKz0DXP/AAAAFQC/VgWP0Ped9MQmkqWuuuiDZhOuTQAAAIAFrKK9MozPhqFbdBDhY7a4TdAuOnT6Hq8ihIjplIQP701GMXOzI9BCyMMqeW83/KpSNUXr9h3/oWheLf0Y69wT+KzCaSIa937FFz0oHf9vEQa8wvhKRPTnoSU8pPdT4ZxkC7Ks+oc/Ok8p0NgXFR+YmkPCtB3qHW9E64LrMg42sAAAAIA5eg2eqMOq6FaJXgB8VeDHXzUqIgVIXhJ0K+3SDahkbWeuBzlmyAIaWOuePJSFt7C7gALOtb13M9NMNPYg6+v5ahXTl39K6No4z18gvr7HfTVA3SUlpofwXIZpOmOX+bev/EeyI+LIQPUke5KZsPId+UGAD1iWW4DPar9NGJYrxw== c@dsa';
