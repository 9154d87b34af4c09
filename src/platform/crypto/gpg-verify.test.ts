import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { signatureKeyId } from './gpg-keys.ts';
import { checkGpgSignature } from './gpg-verify.ts';
import { SIGNED_COMMIT_PAYLOAD, SIGNED_COMMIT_SIGNATURE, SIGNER_KEY_ID, SIGNER_PUBLIC_KEY } from '../../../test/support/gpg-fixtures.ts';

const gpg = spawnSync('gpg', ['--version'], { stdio: 'ignore' }).status === 0;

test('the key id of a signature comes from its issuer subpacket; anything else is null', () => {
  assert.equal(signatureKeyId(SIGNED_COMMIT_SIGNATURE), SIGNER_KEY_ID);
  assert.equal(signatureKeyId(SIGNER_PUBLIC_KEY), null);
  assert.equal(signatureKeyId('-----BEGIN PGP SIGNATURE-----\n\nAAAA\n-----END PGP SIGNATURE-----'), null);
  assert.equal(signatureKeyId('not a signature'), null);
});

test('a signature checks out against its key and payload, not against another payload', { skip: gpg ? false : 'gpg is not installed' }, async () => {
  const good = await checkGpgSignature(SIGNER_PUBLIC_KEY, SIGNED_COMMIT_SIGNATURE, SIGNED_COMMIT_PAYLOAD);
  assert.deepEqual(good, { valid: true, uids: [{ name: 'Signer', email: 'signer@example.com' }] });
  const bad = await checkGpgSignature(SIGNER_PUBLIC_KEY, SIGNED_COMMIT_SIGNATURE, SIGNED_COMMIT_PAYLOAD.replace('Signed', 'Forged'));
  assert.deepEqual(bad, { valid: false, uids: [{ name: 'Signer', email: 'signer@example.com' }] });
  const noKey = await checkGpgSignature('garbage', SIGNED_COMMIT_SIGNATURE, SIGNED_COMMIT_PAYLOAD);
  assert.deepEqual(noKey, { valid: false, uids: [] });
});
