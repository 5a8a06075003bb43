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

/**
 * Names an action had before this rule (ADR 1000), by its name now: the MCP tool and agent CLI
 * command words it replaced. An old spelling answers with the new name on both surfaces (the MCP
 * `tool_renamed` problem, the CLI's usage error); this is the one list of them.
 */
export const FORMER_NAMES: Readonly<Record<string, { tool?: string; commands?: readonly string[] }>> = {
  get_manifest: { tool: 'read_manifest', commands: ['manifest'] },
  search_docs: { commands: ['docs search'] },
  get_docs_page: { tool: 'read_docs_page', commands: ['docs read'] },
  get_open_api_operation: { tool: 'lookup_api_operation', commands: ['openapi operation'] },
  get_grant: { tool: 'read_grant', commands: ['grant'] },
  get_plan_usage: { tool: 'read_plan_usage', commands: ['plan-usage'] },
  list_audit: { commands: ['audit'] },
  get_setup: { tool: 'read_setup', commands: ['setup'] },
  list_endpoints: { commands: ['endpoints list'] },
  get_endpoint: { commands: ['endpoints show'] },
  list_events: { commands: ['events list'] },
  get_event: { commands: ['events show'] },
  get_event_receipt: { commands: ['events receipt'] },
  get_receipt: { commands: ['receipts show'] },
  get_diagnostics: { tool: 'read_diagnostics', commands: ['diagnostics'] },
  preview_replay: { tool: 'preview_event_replay', commands: ['replay'] },
  preview_diagnostics_share: { commands: ['diagnostics share'] },
  preview_endpoint_create: { commands: ['endpoints add'] },
  preview_endpoint_edit: { commands: ['endpoints edit'] },
  preview_secret_rotate: { tool: 'preview_secret_rotation', commands: ['endpoints rotate-secret'] },
  preview_endpoint_delete: { commands: ['endpoints delete'] },
  preview_test_event: { commands: ['endpoints test'] },
  list_action_intents: { commands: ['intents list'] },
  get_action_intent: { commands: ['intents show'] },
  confirm_action_intent: { commands: ['intents confirm'] },
  cancel_action_intent: { commands: ['intents cancel'] },
};

/** Old MCP tool name → the name now (`read_manifest` → `get_manifest`). */
export function renamedTools(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(FORMER_NAMES).flatMap(([name, was]) => (was.tool ? [[was.tool, name]] : [])),
  );
}

/** Old CLI command words → the command now (`events list` → `list-events`). */
export function renamedCommands(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(FORMER_NAMES).flatMap(([name, was]) =>
      (was.commands ?? []).map((words) => [words, cliWordsFor(name).join(' ')]),
    ),
  );
}
