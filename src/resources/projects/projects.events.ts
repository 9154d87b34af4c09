import { onCacheVoid } from '../../platform/cache-bus.ts';

// A counter of project changes: caches derived from project rows compare it to know when they are out of
// date. Changes made through other workers arrive with their cache announcements.
let generation = 0;
onCacheVoid('all', () => generation++);

export function projectsChanged(): void {
  generation++;
}

export function projectsGeneration(): number {
  return generation;
}
