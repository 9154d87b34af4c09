// Writing benchmark data (bench/seed.ts, bench/search.ts): batch inserts, on SQLite and PostgreSQL alike, and a fixed
// pseudo-random sequence.

type Row = Record<string, unknown>;

/** The batch inserts into `db` (a Kysely instance). */
export function batchInserts(db: any) {
  return {
    /** Inserts `rows` in batches of `perBatch`. */
    async insertAll(table: string, rows: Row[], perBatch: number): Promise<void> {
      for (let i = 0; i < rows.length; i += perBatch) await db.insertInto(table).values(rows.slice(i, i + perBatch)).execute();
    },

    /**
     * Inserts `total` rows made on the fly by `make(i)`, in batches of `perBatch` inside one transaction per 50 batches
     * (fast on both databases), writing the progress to stdout.
     */
    async stream(table: string, total: number, make: (i: number) => Row, perBatch: number, label = table): Promise<void> {
      const chunk = perBatch * 50;
      const started = Date.now();
      for (let start = 0; start < total; start += chunk) {
        const end = Math.min(total, start + chunk);
        await db.transaction().execute(async (trx: any) => {
          for (let i = start; i < end; i += perBatch) {
            const rows: Row[] = [];
            for (let j = i; j < Math.min(end, i + perBatch); j++) rows.push(make(j));
            await trx.insertInto(table).values(rows).execute();
          }
        });
        process.stdout.write(`\r${label}: ${end}/${total} (${Math.round((Date.now() - started) / 1000)} s)   `);
      }
      process.stdout.write('\n');
    },
  };
}

/** A fixed pseudo-random sequence (xorshift) from `seed`, so two runs of the same size write the same data. */
export function randomSequence(seed: number): { rand: () => number; pick: (n: number) => number } {
  let state = seed;
  const rand = (): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
  return { rand, pick: (n) => Math.floor(rand() * n) };
}
