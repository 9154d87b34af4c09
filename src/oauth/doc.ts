/** OpenAPI description of an OAuth endpoint (documentation only: parameters are checked by the handlers). */
export function doc(summary: string): object {
  return { summary, tags: ['oauth'] };
}
