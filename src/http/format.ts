// Wire formats shared by every presenter.

/** ISO 8601 in UTC with milliseconds, e.g. "2016-07-02T10:11:12.000Z"; null stays null. */
export function iso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

/** A calendar date "YYYY-MM-DD". */
export function isoDate(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString().slice(0, 10);
}

export function bool(v: number | boolean | null | undefined): boolean {
  return !!v;
}

export function webUrl(base: string, ...path: string[]): string {
  return [base, ...path.map((p) => p.replace(/^\/+|\/+$/g, ''))].join('/');
}
