// An OpenPGP key (ed25519, user id "Signer <signer@example.com>") and its detached signature over one commit
// object (SIGNED_COMMIT_PAYLOAD), made once with gpg, for the commit signature tests.

export const SIGNER_PUBLIC_KEY = `-----BEGIN PGP PUBLIC KEY BLOCK-----

mDMEawWE3RYJKwYBBAHaRw8BAQdA0cqYeDQpAis2SzZ4WAKQln+ibE9bn/oUM+x6
o+YdtEu0G1NpZ25lciA8c2lnbmVyQGV4YW1wbGUuY29tPoiQBBMWCAA4FiEEpHtA
Voadw+/jh6TmGS0CezR609gFAmsFhN0CGwMFCwkIBwIGFQoJCAsCBBYCAwECHgEC
F4AACgkQGS0CezR609gJEQEAtu1NX/4tptKySDiwU/zK0p+yq3shoaURVbENEigv
n/MBAM1Lo7ST/agePbHwbyptLIm/nq2urr2vSOPXNpq/w/wN
=cqbG
-----END PGP PUBLIC KEY BLOCK-----`;

export const SIGNER_KEY_ID = '192D027B347AD3D8';

/** The blob content, then the commit object without its gpgsig header; the tree holds README.md only. */
export const SIGNED_README = 'signed\n';
export const SIGNED_COMMIT_PAYLOAD = 'tree 26a1c737e1fbde1ec497cdded6a0a1c4d89f6b2a\nauthor Signer <signer@example.com> 1700000000 +0000\ncommitter Signer <signer@example.com> 1700000000 +0000\n\nSigned commit\n';

export const SIGNED_COMMIT_SIGNATURE = `-----BEGIN PGP SIGNATURE-----

iHUEABYIAB0WIQSke0BWhp3D7+OHpOYZLQJ7NHrT2AUCawWE3QAKCRAZLQJ7NHrT
2JvJAQDNA/wF3OJAolDUnb5ayYiaeP6eo4fWueVGrS+epaDmTgD9EYTFezXcDLh2
bdssS5mdEtarlE3r84kfauR6eXyHlwc=
=4hqh
-----END PGP SIGNATURE-----`;

/** The commit object with the signature in its gpgsig header, as git writes it. */
export function signedCommitObject(message = 'Signed commit\n'): string {
  const [head] = SIGNED_COMMIT_PAYLOAD.split('\n\n');
  return `${head}\ngpgsig ${SIGNED_COMMIT_SIGNATURE.split('\n').join('\n ')}\n\n${message}`;
}
