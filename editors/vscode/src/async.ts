// Timing helpers for the live Search quick pick. Pure module: no `vscode` import.

export interface Debounced<A extends unknown[]> {
  (...args: A): void;
  /** Drops a pending call. */
  cancel(): void;
}

/** Calls `fn` with the latest arguments once `waitMs` passed without another call. */
export function debounce<A extends unknown[]>(fn: (...args: A) => void, waitMs: number): Debounced<A> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const debounced = ((...args: A) => {
    if (timer !== undefined) {
      clearTimeout(timer);
    }
    timer = setTimeout(() => {
      timer = undefined;
      fn(...args);
    }, waitMs);
  }) as Debounced<A>;
  debounced.cancel = () => {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
  };
  return debounced;
}

/**
 * Hands out tickets for requests so that only the answer to the latest one is used: a slow answer
 * to an older query must not replace the results of a newer one.
 */
export class LatestOnly {
  private current = 0;

  /** A ticket for a new request; every earlier ticket becomes stale. */
  next(): number {
    this.current += 1;
    return this.current;
  }

  isLatest(ticket: number): boolean {
    return ticket === this.current;
  }

  /** Makes every ticket handed out so far stale (the quick pick closed). */
  invalidate(): void {
    this.current += 1;
  }
}
