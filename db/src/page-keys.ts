/**
 * Sort keys of deep offsets, remembered for a while, so that a list paged by offset (the contracts' page numbers) can
 * seek to a deep page instead of stepping over every entry before it. The key of the row at offset `at` (a multiple
 * of `step`) of a list (`scope`: the list and its filter) is found once and stands for `ttlMs` by the caller's clock;
 * requests that come meanwhile wait for the same lookup. It is counted from the key of the step below when that one
 * stands (`find(from, step)`: one step of entries, for pages read in order), else from the start (`find(undefined,
 * at)`: one statement, as a plain offset). At most `max` keys per database handle, then it starts again.
 */
export class SteppedKeys<K> {
  private readonly byHandle = new WeakMap<object, Map<string, { key: Promise<K | undefined>; until: number }>>();

  constructor(
    readonly step: number,
    private readonly ttlMs: number,
    private readonly max = 10_000,
  ) {}

  /** The key at offset `at`, or undefined past the end of the list. */
  at(db: object, scope: string, at: number, now: number, find: (from: K | undefined, skip: number) => Promise<K | undefined>): Promise<K | undefined> {
    let keys = this.byHandle.get(db);
    if (!keys) this.byHandle.set(db, (keys = new Map()));
    const standing = (offset: number) => {
      const cached = keys.get(`${scope}:${offset}`);
      return cached && cached.until > now ? cached.key : undefined;
    };
    const cached = standing(at);
    if (cached) return cached;
    if (keys.size >= this.max) keys.clear();
    const below = at > this.step ? standing(at - this.step) : undefined;
    const key = below
      ? below.then((from) => (from ? find(from, this.step) : undefined)) // undefined: the step below is past the end already
      : find(undefined, at);
    const name = `${scope}:${at}`;
    keys.set(name, { key, until: now + this.ttlMs });
    key.catch(() => keys.delete(name));
    return key;
  }
}
