// The scope vocabulary and tier presets, defined once. Docs (the tier table),
// the manifest, OpenAPI security requirements and the security suite derive from here.
//   <area>:read            reads
//   <action>:preview       create a preview (an action intent) for a governed action
//   <action>:execute       confirm (execute) that action

export const READ_AREAS = [
  'setup',
  'endpoints',
  'events',
  'receipts',
  'diagnostics',
  'plan',
  'grant',
  'intents',
  'audit',
] as const;

export const ACTIONS = [
  'replay',
  'diagnostics_share',
  'endpoint_create',
  'endpoint_edit',
  'secret_rotate',
  'endpoint_delete',
  'test_event',
  'bulk_replay',
  'alert_subscribe',
  'alert_unsubscribe',
] as const;

export type ReadArea = (typeof READ_AREAS)[number];
export type Action = (typeof ACTIONS)[number];
export type Scope = `${ReadArea}:read` | `${Action}:preview` | `${Action}:execute`;

export const readScope = (area: ReadArea): Scope => `${area}:read`;
export const previewScope = (action: Action): Scope => `${action}:preview`;
export const executeScope = (action: Action): Scope => `${action}:execute`;

export const ALL_SCOPES: readonly Scope[] = [
  ...READ_AREAS.map(readScope),
  ...ACTIONS.flatMap((a) => [previewScope(a), executeScope(a)]),
];

export const SCOPE_DESCRIPTIONS: Record<Scope, string> = Object.fromEntries(
  ALL_SCOPES.map((s) => {
    const [what, level] = s.split(':') as [string, string];
    const label = what.replace(/_/g, ' ');
    const text =
      level === 'read'
        ? `Read ${label}.`
        : level === 'preview'
          ? `Preview ${/^[aeiou]/.test(label) ? 'an' : 'a'} ${label} action (creates an action intent; changes nothing).`
          : `Confirm and execute a previewed ${label} action.`;
    return [s, text];
  }),
) as Record<Scope, string>;

export const TIERS = ['observer', 'operator', 'recovery_operator', 'admin_assistant'] as const;
export type Tier = (typeof TIERS)[number];

const OBSERVER_READS = READ_AREAS.filter((a) => a !== 'audit').map(readScope);

export const TIER_SCOPES: Record<Tier, readonly Scope[]> = {
  // Investigate only.
  observer: OBSERVER_READS,
  // Investigate and prepare every recovery; a human (or a recovery grant) confirms.
  operator: [...OBSERVER_READS, ...ACTIONS.map(previewScope), executeScope('test_event')],
  // Recover events end to end: replay, share diagnostics, send test events.
  recovery_operator: [
    ...OBSERVER_READS,
    ...(['replay', 'bulk_replay', 'diagnostics_share', 'test_event'] as const).flatMap((a) => [
      previewScope(a),
      executeScope(a),
    ]),
  ],
  // Everything an agent may be granted, including endpoint changes and the audit log.
  admin_assistant: ALL_SCOPES,
};

export const TIER_DESCRIPTIONS: Record<Tier, string> = {
  observer:
    'Reads setup, endpoints, events, receipts, diagnostics, plan usage, its own grant and intents. No side effects.',
  operator: 'Observer, plus previews of every governed action and execution of test events.',
  recovery_operator:
    'Observer, plus preview and execution of replays, bulk replays, diagnostics shares and test events.',
  admin_assistant: 'Every scope, including endpoint create/edit/delete, secret rotation and the audit log.',
};

export function isScope(value: string): value is Scope {
  return (ALL_SCOPES as readonly string[]).includes(value);
}
