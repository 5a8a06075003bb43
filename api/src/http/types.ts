// Typed Hono context variables shared by every middleware.
import type { Principal } from '../operations/types.ts';

export type AppEnv = {
  Variables: {
    requestId: string;
    /** The grant behind an Agent Operations call, authenticated before its input is validated. */
    principal?: Principal;
  };
};
