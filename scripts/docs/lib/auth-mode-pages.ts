// The facts section of each auth-mode page (`<!-- generated:auth-mode-<mode> -->`), rendered
// from AUTH_MODE_FACTS, the definitions intake itself reads, so a page cannot drift from
// what the verifier checks: headers, signed content, encoding, tolerance, dedupe and
// event-type sources, the command that creates the endpoint and a signing example.
// Placeholders only (<SIGNING_SECRET>, <INGEST_URL> …).
import {
  AUTH_MODE_FACTS,
  createCommandFor,
  importSecretCommandFor,
  type ValueSource,
} from '../../../api/src/intake/auth-modes.ts';
import { INTAKE_SUPPORT_CODES } from '../../../api/src/errors/codes/intake.ts';
import type { AuthMode } from '../../../api/src/store/tables/endpoints.ts';
import { code, table } from './markdown.ts';

/** The directive a mode's page embeds after its intro, e.g. `auth-mode-standard-webhooks` (and `…-example` at its end). */
export function authModeDirective(mode: AuthMode): string {
  return `auth-mode-${mode.replace(/_/g, '-')}`;
}

/** Where a value comes from; header names as the sender spells them (the facts list them lowercase). */
function source(s: ValueSource | null, none: string, spelled: readonly { name: string }[]): string {
  if (!s) return none;
  if (s.from === 'json') return `JSON path ${code(s.path)}`;
  const spell = (n: string) => spelled.find((h) => h.name.toLowerCase() === n)?.name ?? n;
  return `header ${s.names.map((n) => code(spell(n))).join(', then ')}`;
}

export function renderAuthModeFacts(mode: AuthMode): string {
  const f = AUTH_MODE_FACTS[mode];
  const rows: [string, string][] = [
    ['Mode', code(f.mode)],
    ['Headers read', f.headers.map((h) => `${code(h.name)}: ${h.description.replace(/\.$/, '')}`).join('; ')],
    ['Signed content', f.signedContent ? code(f.signedContent) : 'nothing: the credential itself is checked'],
    ['Encoding', f.encoding],
    ['Secret', f.secretFormat],
    [
      'Timestamp tolerance',
      f.toleranceSec === null
        ? 'none: the scheme signs no timestamp'
        : `${f.toleranceSec} s by default (${code('--tolerance-sec')})`,
    ],
    ['Several signatures in one request', f.multipleSignatures ? 'accepted; any match passes' : 'no'],
    [
      'Dedupe id',
      source(
        f.externalId,
        `none unless configured (${code('--external-id-header')} or ${code('--external-id-path')})`,
        f.headers,
      ),
    ],
    ['Event type', source(f.eventType, `the mapping's event type path (default ${code('type')})`, f.headers)],
    ['Typical senders', f.senders.join('; ')],
  ];
  const h = f.handshake;
  if (h)
    rows.push([
      'Handshake',
      `${h.kind === 'challenge' ? `a body with ${code(`"${h.typeField}": "${h.type}"`)}` : `a request with ${code(`${h.header}: ${h.value}`)}`}, sent ${h.sentWhen}: once verified it is answered \`200\`${h.kind === 'challenge' ? ` with its ${code(h.challengeField)}` : ''}, stored as no event and never handed to Flow; its receipt carries support code ${code(INTAKE_SUPPORT_CODES.handshake.code)}`,
    ]);
  return [
    '## At a glance',
    '',
    table(['Fact', 'Value'], rows),
    '',
    '## Create the endpoint',
    '',
    ...(f.secretEnv
      ? senderSecretSteps(f.secretEnv, createCommandFor(f), importSecretCommandFor(f) ?? '')
      : [
          '```sh',
          createCommandFor(f),
          '```',
          '',
          `The command prints the endpoint's ${code('ingest_url')} and its ${code('secret')}, once; afterwards only the last four characters are shown. Store the secret in the sender now.`,
        ]),
  ].join('\n');
}

/** For modes whose sender makes the secret: import it on create, or afterwards. */
function senderSecretSteps(envVar: string, create: string, importSecret: string): string[] {
  return [
    `The sender makes the signing secret, so Flowport imports it (${code('--secret-env')} reads it from an environment variable, so it never appears in the command's arguments or output). Flowport stores it encrypted and shows only its last four characters afterwards.`,
    '',
    'If you already have the secret:',
    '',
    '```sh',
    `${envVar}='<SIGNING_SECRET>' ${create}`,
    '```',
    '',
    `If the sender shows the secret only after you give it the ingest URL, create the endpoint without ${code('--secret-env')} (Flowport generates a placeholder secret that only suits local tests), give the sender its ${code('ingest_url')}, then import the secret it shows:`,
    '',
    '```sh',
    `${envVar}='<SIGNING_SECRET>' ${importSecret}`,
    '```',
  ];
}

/** The end of a mode's page: a request signed the way the sender signs, and the mode's caveats. */
export function renderAuthModeExample(mode: AuthMode): string {
  const f = AUTH_MODE_FACTS[mode];
  return [
    '## Sign a test request yourself',
    '',
    `\`\`\`${f.example.language}`,
    f.example.code,
    '```',
    ...(f.notes.length > 0 ? ['', '## Good to know', '', ...f.notes.map((n) => `- ${n}`)] : []),
  ].join('\n');
}

/** What each mode dedupes on (`<!-- generated:auth-mode-dedupe -->`), from the same facts intake reads. */
export function renderAuthModeDedupeTable(): string {
  return table(
    ['Auth mode', 'External event id (dedupe)'],
    (Object.keys(AUTH_MODE_FACTS) as AuthMode[]).map((m) => {
      const f = AUTH_MODE_FACTS[m];
      const preset = source(f.externalId, 'none unless you configure a header or a JSON path', f.headers);
      return [code(m), f.externalId ? `${preset}; or a header or JSON path you configure` : preset];
    }),
  );
}

/**
 * Directives for the docs generator: `auth-mode-<mode>` and `auth-mode-<mode>-example` per mode,
 * and `auth-mode-dedupe` (every mode's dedupe id).
 */
export function authModeDirectives(): Record<string, () => string> {
  return Object.fromEntries([
    ...(Object.keys(AUTH_MODE_FACTS) as AuthMode[]).flatMap((m) => [
      [authModeDirective(m), () => renderAuthModeFacts(m)],
      [`${authModeDirective(m)}-example`, () => renderAuthModeExample(m)],
    ]),
    ['auth-mode-dedupe', renderAuthModeDedupeTable],
  ]);
}
