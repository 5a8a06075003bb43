// One name per action, derived by one rule (ADR 1000). Every operation has one name: a
// snake_case verb phrase `<verb>_<object>`, the verb one of ACTION_VERBS. Each surface spells
// that same name in its own case:
//   MCP tool      get_event_receipt        (the name itself)
//   operationId   getEventReceipt          (camelCase)
//   CLI command   flowport get-event-receipt  (kebab-case, one word)
// A governed action's preview is `preview_<kind>`: its intent kind is `<kind>`, its scopes
// `<kind>:preview` and `<kind>:execute`, its source file operations/intents/preview-<kind>.ts.
// tests/reads/naming.test.ts checks every operation against this.

export const ACTION_VERBS = ['get', 'list', 'search', 'preview', 'confirm', 'cancel'] as const;

/** `get_event_receipt` → `getEventReceipt`. */
export function operationIdFor(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** `get_event_receipt` → `['get-event-receipt']`. */
export function cliWordsFor(name: string): string[] {
  return [name.replace(/_/g, '-')];
}

/** `preview_secret_rotate` → `secret_rotate`; null when the name is not a preview. */
export function intentKindOf(name: string): string | null {
  return name.startsWith('preview_') ? name.slice('preview_'.length) : null;
}
