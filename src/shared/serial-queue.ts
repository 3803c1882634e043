/**
 * Runs a list's loads one at a time, in order. A reload and a "next page" that overlap race: the
 * reload, asked for before the page and answered after it, would put back the shorter list and drop
 * the page (the operator's "Show more" seemed to do nothing). In a queue each load reads the list's
 * length and cursor when it starts, so it builds on what the one before it left.
 */
export function serialQueue(): (job: () => Promise<void>) => Promise<void> {
  let tail: Promise<void> = Promise.resolve();
  return (job) => {
    // A failed job must not stop the ones behind it; each job reports its own errors into the store.
    const run = tail.then(job, job);
    tail = run.catch(() => undefined);
    return run;
  };
}
