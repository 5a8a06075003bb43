// WAL checkpoints off the event loop. The adapter's connection runs with
// `wal_autocheckpoint = 0`; this helper owns a second connection in a worker thread and
// runs `wal_checkpoint(PASSIVE)` there, so none of a checkpoint's work (page copying, fsyncs)
// runs inside a COMMIT on the event loop. Two kinds of pass:
// - `copy`, while writes go on: copies the frames the WAL holds into the database file and
//   fsyncs that file, so the pages are on disk before a later `complete` pass (SQLite itself
//   syncs the database file only when a checkpoint completes).
// - `complete`, while the adapter holds writes: copies the rest, SQLite fsyncs the file, and
//   the next write rewinds the WAL to its start (a checkpoint racing continuous writes never
//   completes, and the WAL would only grow).
// See docs/adr/0303-sqlite-checkpoints-off-the-event-loop.md and
// docs/adr/0306-sqlite-wal-rewinds-at-a-size.md.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** Result of one `wal_checkpoint(PASSIVE)`: frames in the WAL and frames copied. */
export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

// Plain CommonJS so the thread needs no loader; better-sqlite3 is resolved by the parent.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { closeSync, fdatasyncSync, openSync } = require('node:fs');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
// The database file, for the copy pass's fsync (fsync applies to the file, whichever descriptor).
const dbFile = openSync(workerData.file, 'r');
db.pragma('busy_timeout = 5000');
db.pragma('synchronous = NORMAL');
db.pragma('wal_autocheckpoint = 0');
parentPort.on('message', (msg) => {
  if (msg === 'close') {
    db.close();
    closeSync(dbFile);
    parentPort.close();
    return;
  }
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    if (msg === 'copy') fdatasyncSync(dbFile);
    parentPort.postMessage({ ok: true, busy: r.busy, log: r.log, checkpointed: r.checkpointed });
  } catch (err) {
    parentPort.postMessage({ ok: false, message: String((err && err.message) || err) });
  }
});
`;

type Reply = ({ ok: true } & CheckpointResult) | { ok: false; message: string };

export class Checkpointer {
  private readonly worker: Worker;
  private waiting: { resolve: (r: CheckpointResult) => void; reject: (e: Error) => void } | null = null;
  private dead: Error | null = null;

  constructor(file: string) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file, driver } });
    // Never keeps the process alive on its own; close() ends it.
    this.worker.unref();
    this.worker.on('message', (m: Reply) => {
      const w = this.waiting;
      this.waiting = null;
      if (!w) return;
      if (m.ok) w.resolve({ busy: m.busy, log: m.log, checkpointed: m.checkpointed });
      else w.reject(new Error(`SQLite checkpoint failed: ${m.message}`));
    });
    const fail = (err: Error) => {
      this.dead ??= err;
      this.waiting?.reject(err);
      this.waiting = null;
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`The SQLite checkpoint thread exited (code ${code}).`)));
  }

  /** One PASSIVE checkpoint pass in the thread (see the file's head); one at a time. */
  run(pass: 'copy' | 'complete'): Promise<CheckpointResult> {
    if (this.dead) return Promise.reject(this.dead);
    if (this.waiting) return Promise.reject(new Error('A checkpoint is already running.'));
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.worker.postMessage(pass);
    });
  }

  /** Closes the thread's connection and ends the thread. */
  async close(): Promise<void> {
    if (this.dead) return;
    const exited = new Promise<void>((r) => this.worker.once('exit', () => r()));
    this.worker.ref(); // so this process waits for the thread to finish closing
    this.worker.postMessage('close');
    await exited;
  }
}
