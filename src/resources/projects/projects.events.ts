// A counter of project changes in this process: caches derived from project rows compare it to know
// when they are out of date.
let generation = 0;

export function projectsChanged(): void {
  generation++;
}

export function projectsGeneration(): number {
  return generation;
}
