// Definitions of the sandbox's install-side operator commands (handlers: ./sandbox.ts), against a
// running Flowport in sandbox mode (ADR 1200): `flowport sandbox workflows enable|disable --shop …
// --trigger …` (a sandbox workflow using the trigger is turned on or off; Flow's lifecycle callback
// follows) and `flowport sandbox uninstall --shop …` (the app is uninstalled there; app/uninstalled
// follows).
import { CLI_ENV } from '../../config.ts';
import { LOCAL_SERVER_RULE } from '../../lib/served-url-file.ts';
import type { OperatorCommand } from '../definitions.ts';

const TARGET_OPTIONS = [
  { flag: '--shop <domain>', description: 'The sandbox store (its myshopify.com domain).', required: true },
  {
    flag: '--url <baseUrl>',
    description: `The running Flowport (sandbox mode, on this machine). Default: \`${CLI_ENV.baseUrl}\`, else ${LOCAL_SERVER_RULE}.`,
  },
];

const WORKFLOW_OPTIONS = [
  ...TARGET_OPTIONS,
  { flag: '--trigger <handle>', description: 'The Flow trigger handle, e.g. external-event.', required: true },
  {
    flag: '--timestamp <iso>',
    description: "The lifecycle callback's timestamp (default now); an older one than Flowport has is ignored.",
  },
];

export const SANDBOX_INSTALL_COMMANDS: OperatorCommand[] = [
  {
    command: ['sandbox', 'workflows', 'enable'],
    summary:
      "Turn on a sandbox workflow that uses a trigger: the sandbox sends Flow's signed lifecycle callback (has_enabled_flow: true) to the running Flowport.",
    options: WORKFLOW_OPTIONS,
    store: false,
  },
  {
    command: ['sandbox', 'workflows', 'disable'],
    summary:
      "Turn off the sandbox workflow of a trigger: the sandbox sends Flow's signed lifecycle callback (has_enabled_flow: false); the trigger's events then end no_workflow without a call.",
    options: WORKFLOW_OPTIONS,
    store: false,
  },
  {
    command: ['sandbox', 'uninstall'],
    summary:
      'Uninstall the app from a sandbox store: its token stops working and the sandbox sends a signed app/uninstalled webhook to the running Flowport.',
    options: TARGET_OPTIONS,
    store: false,
  },
];
