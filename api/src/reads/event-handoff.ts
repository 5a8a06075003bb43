// An event in words and what to do about it: its plain-words state, where its handoff stopped,
// and its recovery options, the right move first (getEvent). Computed here once from the stored
// facts (the event row, the shop's replay facts, Flow's readiness for the event's trigger).
import { DOCS_PATHS, errorDocsPath, joinUrl } from '../docs-paths.ts';
import { isErrorCode } from '../errors/catalog.ts';
import type { FlowReadiness } from '../handoff/flow-readiness.ts';
import { EVENT_STATE_DESCRIPTIONS, eventStateInWords, shopHoldOf } from '../handoff/outcomes.ts';
import { type EventRow, eventReplay, type ShopFacts } from './events.ts';

export interface RecoveryOption {
  action: string;
  available: boolean;
  description: string;
  docs_url: string;
  required_scope: string | null;
  operation: string | null;
}

/** What a recovered event's plain-words state and handoff explanation add: by which replay, when (ADR 0420). */
export function recoveredInWords(row: Pick<EventRow, 'recovered_by' | 'recovered_at'>): string | null {
  if (!row.recovered_by) return null;
  const at = row.recovered_at === null ? '' : ` delivered at ${new Date(Number(row.recovered_at)).toISOString()}`;
  return `This sender event was recovered by replay ${row.recovered_by}${at}: Flow accepted the replay, so no further replay is needed.`;
}

/** An event's state in plain words (state_description): its state's words, and its recovery when recovered. */
export function stateDescription(row: EventRow): string {
  const recovered = recoveredInWords(row);
  const words = eventStateInWords(row.state, row.support_code).description;
  return recovered ? `${words} ${recovered}` : words;
}

/** Where the handoff stopped, in one place for people and agents. */
export function handoffStop(row: EventRow): { stage: 'intake' | 'queue' | 'flow' | 'done'; explanation: string } {
  const stop = handoffStopOfState(row);
  const recovered = recoveredInWords(row);
  if (!recovered) return stop;
  // A recovered event needs no next step: its words say what happened, then by which replay it was recovered.
  const happened =
    row.state === 'no_workflow' ? eventStateInWords(row.state, row.support_code).description : stop.explanation;
  return { stage: stop.stage, explanation: `${happened} ${recovered}` };
}

function handoffStopOfState(row: EventRow): { stage: 'intake' | 'queue' | 'flow' | 'done'; explanation: string } {
  switch (row.state) {
    case 'duplicate_suppressed':
      return { stage: 'intake', explanation: 'Intake recognised a duplicate external event id and did not queue it.' };
    case 'accepted':
    case 'queued':
      return { stage: 'queue', explanation: 'Stored and waiting for its next delivery attempt.' };
    case 'held': {
      const hold = shopHoldOf(row.error_code);
      return { stage: 'queue', explanation: `${hold.why}. ${hold.release}` };
    }
    case 'delivering':
      return { stage: 'flow', explanation: 'A worker is calling Shopify Flow now.' };
    case 'delivered':
      return {
        stage: 'done',
        explanation:
          'Shopify Flow accepted the trigger. This does not mean a workflow ran its actions; check the workflow run history in Shopify.',
      };
    case 'no_workflow': {
      const words = eventStateInWords(row.state, row.support_code);
      return { stage: 'flow', explanation: words.next ? `${words.description} ${words.next}` : words.description };
    }
    case 'failed':
      return { stage: 'flow', explanation: 'Delivery to Shopify Flow stopped without success; see error_code.' };
    default:
      return {
        stage: 'queue',
        explanation: EVENT_STATE_DESCRIPTIONS[row.state as keyof typeof EVENT_STATE_DESCRIPTIONS] ?? row.state,
      };
  }
}

/**
 * What can be done about an event, the right move first (ADR 0420): a recovered event leads with
 * the replay that recovered it; a delivered one with checking the run in Flow (a replay runs the
 * workflow again); a no_workflow event whose trigger no enabled workflow uses (as Flow last said,
 * `readiness`) with deploying and enabling one; an event on its way with waiting; otherwise replay.
 */
export function recoveryOptions(
  row: EventRow,
  facts: ShopFacts,
  publicUrl: string,
  readiness: FlowReadiness = { enabled: 'unknown', since: null },
): RecoveryOption[] {
  const url = (p: string) => joinUrl(publicUrl, p);
  const replay = eventReplay(row, facts);
  const first: RecoveryOption[] = leadingOption(row, readiness, url);
  const out: RecoveryOption[] = [];
  if (row.state !== 'rejected' && row.state !== 'duplicate_suppressed') {
    out.push({
      action: 'replay',
      available: replay.available,
      description: replayOptionText(row, replay, readiness),
      docs_url: url(DOCS_PATHS.replay),
      required_scope: 'replay:preview',
      operation: 'previewReplay',
    });
  }
  if (row.state === 'queued' || row.state === 'accepted' || row.state === 'delivering') {
    first.push({
      action: 'wait',
      available: true,
      description: row.next_attempt_at
        ? `Automatic retry scheduled at ${new Date(Number(row.next_attempt_at)).toISOString()}. No action needed yet.`
        : 'Delivery is in progress. No action needed yet.',
      docs_url: url(DOCS_PATHS.retriesReplayResend),
      required_scope: null,
      operation: null,
    });
  }
  if (row.state === 'held') {
    const hold = shopHoldOf(row.error_code);
    first.push({
      action: hold.action,
      available: true,
      description: hold.recovery,
      docs_url: url(errorDocsPath(hold.errorCode)),
      required_scope: null,
      operation: null,
    });
  }
  if (row.state === 'duplicate_suppressed' && row.duplicate_of) {
    first.push({
      action: 'inspect_original',
      available: true,
      description: `This is a duplicate of ${row.duplicate_of}; investigate (or replay) that event instead.`,
      docs_url: url(DOCS_PATHS.duplicates),
      required_scope: 'events:read',
      operation: 'getEvent',
    });
  }
  if (!row.recovered_by && (row.state === 'failed' || row.state === 'no_workflow')) {
    out.push({
      action: 'share_diagnostics',
      available: true,
      description: 'Preview a diagnostics share: a redacted, expiring bundle support can open without a grant.',
      docs_url: url(DOCS_PATHS.diagnosticsShare),
      required_scope: 'diagnostics_share:preview',
      operation: 'previewDiagnosticsShare',
    });
  }
  if (row.error_code && isErrorCode(row.error_code)) {
    out.push({
      action: 'read_error_docs',
      available: true,
      description: `Read what ${row.error_code} means and how to fix it.`,
      docs_url: url(errorDocsPath(row.error_code)),
      required_scope: null,
      operation: null,
    });
  }
  return [...first, ...out];
}

/** The move a recovered, delivered or workflow-less no_workflow event leads with (none for the others). */
function leadingOption(row: EventRow, readiness: FlowReadiness, url: (p: string) => string): RecoveryOption[] {
  const first: RecoveryOption[] = [];
  const workflowOn = readiness.enabled === 'yes';
  if (row.recovered_by) {
    first.push({
      action: 'inspect_recovery',
      available: true,
      description: `${recoveredInWords(row)} Read that replay (getEvent ${row.recovered_by}) and check its run in Shopify Flow.`,
      docs_url: url(DOCS_PATHS.replay),
      required_scope: 'events:read',
      operation: 'getEvent',
    });
  } else if (row.state === 'delivered') {
    first.push({
      action: 'verify_in_flow',
      available: true,
      description:
        "Shopify Flow accepted the trigger. Check the workflow's run history in Shopify Flow to see what the run did; nothing needs replaying for the event to reach Flow.",
      docs_url: url(DOCS_PATHS.flowTrigger),
      required_scope: null,
      operation: null,
    });
  } else if (row.state === 'no_workflow' && !workflowOn) {
    first.push({
      action: 'deploy_trigger_and_workflow',
      available: true,
      description: `${readiness.enabled === 'no' ? `Flow said at ${new Date(readiness.since).toISOString()} that no enabled workflow uses this trigger. ` : ''}Deploy the Flowport trigger extension and turn on a workflow that uses it, then replay this event.`,
      docs_url: url(DOCS_PATHS.flowTrigger),
      required_scope: null,
      operation: null,
    });
  }
  return first;
}

/** The replay option's words: what a replay does to this event, and why it is or is not available. */
function replayOptionText(row: EventRow, replay: ReturnType<typeof eventReplay>, readiness: FlowReadiness): string {
  if (!replay.available) return `Replay is not available: ${replay.detail ?? replay.reason}`;
  const ack = replay.acknowledgements.length ? ` ${replay.detail}` : '';
  if (row.state === 'delivered' || row.delivered_at !== null)
    return `A replay runs the workflow again: Flow has no idempotency, so what the first run did (emails, tags, orders) can happen again. Replay only if another run is intended (preview, then confirm; the replay is a new event linked by replay_of).${ack}`;
  const on =
    row.state === 'no_workflow' && readiness.enabled === 'yes'
      ? ` An enabled workflow uses the trigger now (Flow said so at ${new Date(readiness.since).toISOString()}).`
      : '';
  return `Preview a replay, then confirm it. A replay creates a new event linked by replay_of and starts a new Flow run.${on}${ack}`;
}
