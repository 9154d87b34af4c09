// The server's own hooks directory, given to every receive-pack as core.hooksPath so that no hook stored in a
// repository ever runs. Its pre-receive refuses non-fast-forward updates of the refs the server lists in
// BELLOWS_NO_FORCE_REFS; the pushed objects are only visible here, inside receive-pack's quarantine.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MESSAGES } from './push-policy.ts';
import { defineMemo } from '../../platform/read-cache.ts';

const PRE_RECEIVE = `#!/bin/sh
[ -z "$BELLOWS_NO_FORCE_REFS" ] && exit 0
status=0
while read old new ref; do
  if printf '%s\\n' "$BELLOWS_NO_FORCE_REFS" | grep -qxF -e "$ref"; then
    if ! git merge-base --is-ancestor "$old" "$new" 2>/dev/null; then
      status=1
    fi
  fi
done
if [ $status -ne 0 ]; then
  printf '\\n%s\\n\\n' '${MESSAGES.forcePush.replace(/'/g, "")}' >&2
fi
exit $status
`;

// Written once per data directory and process (a memo: derived from its key alone).
const prepared = defineMemo<string, string>('git-hooks-dirs', { max: 100 });

/** Writes the hooks directory under the data directory once per process and returns its path. */
export function serverHooksDir(dataDir: string): string {
  const have = prepared.get(dataDir);
  if (have) return have;
  const dir = join(dataDir, 'git-hooks');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'pre-receive');
  let current = '';
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    /* not written yet */
  }
  if (current !== PRE_RECEIVE) writeFileSync(file, PRE_RECEIVE);
  chmodSync(file, 0o755);
  prepared.set(dataDir, dir);
  return dir;
}
