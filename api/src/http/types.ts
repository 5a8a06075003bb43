// Typed Hono context variables shared by every middleware.
export type AppEnv = {
  Variables: {
    requestId: string;
  };
};
