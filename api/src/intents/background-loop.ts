// What the delivery worker's companions (the bulk replay runner, the alert monitor) share: a loop
// started and stopped with the worker, one pass at a time, the next pass on a timer.
import type { Logger } from '../observability/log.ts';
export abstract class BackgroundLoop {
  protected timer: NodeJS.Timeout | null = null;
  protected running: Promise<void> | null = null;
  protected stopped = true;

  /** Runs a pass now, or arranges one (called on start). */
  protected abstract wake(): void;

  start(): void {
    this.stopped = false;
    this.wake();
  }

  /** Stops the timer and waits for the pass under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** Runs `pass` as the pass under way; a failure is logged as `kind`; `after` runs once it ends, unless stopped. */
  protected runPass(pass: () => Promise<void>, log: Logger | undefined, kind: string, after: () => void): void {
    this.running = pass()
      .catch((err: unknown) =>
        log?.error(
          { kind, error: err instanceof Error ? (err.stack ?? err.message) : String(err) },
          'a background pass failed',
        ),
      )
      .finally(() => {
        this.running = null;
        if (!this.stopped) after();
      });
  }
}
