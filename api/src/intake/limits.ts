// Intake limits and tunables, defined once (docs and tests import them).

export const INTAKE_LIMITS = {
  /** Most requests written in one group-commit transaction. */
  maxBatch: 256,
  /** Rejected requests per endpoint per minute that get their own receipt; the rest are tallied. */
  rejectionReceiptsPerMinute: 60,
  /**
   * A body left unread by a refusal answered before reading it (unknown, paused or archived
   * endpoint) is read and dropped to keep the connection when its declared length is at most
   * this; a longer or chunked one closes the connection instead.
   */
  drainUnreadBodyBytes: 64 * 1024,
  /** Retry-After ceiling when the monthly event cap is reached (s). */
  capRetryAfterMaxS: 3_600,
} as const;
