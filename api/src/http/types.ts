// Typed Hono context variables shared by every middleware.
import type { IncomingMessage } from 'node:http';
import type { Principal } from '../core/types.ts';

export type AppEnv = {
  /** What @hono/node-server passes as the env of each request (absent when the app is called directly). */
  Bindings: { incoming?: IncomingMessage };
  Variables: {
    requestId: string;
    /** The grant behind an Agent Operations call, authenticated before its input is validated. */
    principal?: Principal;
  };
};
