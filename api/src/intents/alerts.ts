// Incidents and alerts: evaluates the triggers of every shop, subscribed or not (incidents are
// facts: what is wrong right now; ADR 1311), opens one incident per trigger and subject when it
// starts (once: a unique open key), resolves it when the cause clears, and sends each of the
// shop's subscriptions, if any, one message per incident and kind (opened, resolved), retried
// with exponential backoff. Runs beside the delivery worker (a worker companion).
import { BackgroundLoop } from './background-loop.ts';
import { Webhook } from 'standardwebhooks';
import type { Services } from '../core/types.ts';
import { bodyRetentionMs } from '../handoff/lifecycle.ts';
import { newId } from '../ids.ts';
import { privateTargetReason } from '../lib/outbound-target.ts';
import type { Db } from '../store/db.ts';
import {
  endingSecretOverlaps,
  endpointFailures,
  expiringUnreplayed,
  heldEvents,
  recentNoWorkflow,
  shopsToWatch,
} from '../reads/alert-conditions.ts';
import { type AlertTrigger, type IncidentRow, incidentView } from '../reads/incidents.ts';
import {
  type AlertSubscriptionRow,
  cancelAlertNotification,
  findAlertIncident,
  findAlertSubscription,
  leaseAlertNotification,
  listDueAlertNotifications,
  listOpenAlertIncidents,
  markAlertNotificationFailed,
  markAlertNotificationSent,
  openAlertIncident,
  queueAlertNotifications,
  resolveAlertIncident,
} from '../store/tables/alerts.ts';

export interface AlertSettings {
  /** How often triggers are evaluated and due messages sent. */
  intervalMs: number;
  /** Failed deliveries plus intake rejections of one endpoint within the window that open an incident. */
  failureThreshold: number;
  windowMs: number;
  /** Events ending no_workflow within the window that open an incident. */
  noWorkflowThreshold: number;
  retryBaseMs: number;
  maxAttempts: number;
}

export const DEFAULT_ALERT_SETTINGS: AlertSettings = {
  intervalMs: 30_000,
  failureThreshold: 10,
  windowMs: 15 * 60_000,
  noWorkflowThreshold: 3,
  retryBaseMs: 5_000,
  maxAttempts: 8,
};

interface Finding {
  trigger: AlertTrigger;
  subject: string;
  summary: string;
  details: Record<string, unknown>;
}

const HOUR = 3_600_000;

async function findings(
  db: Db,
  services: Services,
  shop: { id: string; domain: string; plan: string; connection_status: string },
  s: AlertSettings,
  now: number,
): Promise<Finding[]> {
  const out: Finding[] = [];
  const since = now - s.windowMs;
  // An endpoint failing: failed deliveries (by last update) and intake rejections (tallies and receipts) in the window.
  const { failed, rejected } = await endpointFailures(db, shop.id, since);
  const byEndpoint = new Map<string, { failed: number; rejected: number; sample: string | null }>();
  const at = (id: string) => {
    const e = byEndpoint.get(id) ?? { failed: 0, rejected: 0, sample: null };
    byEndpoint.set(id, e);
    return e;
  };
  for (const r of failed) Object.assign(at(r.endpoint_id), { failed: Number(r.n), sample: r.sample });
  for (const r of rejected) at(r.endpoint_id).rejected += Number(r.n);
  for (const [endpoint, e] of byEndpoint)
    if (e.failed + e.rejected >= s.failureThreshold)
      out.push({
        trigger: 'endpoint_failing',
        subject: endpoint,
        summary: `Endpoint ${endpoint}: ${e.failed} failed deliveries and ${e.rejected} intake rejections in the last ${Math.round(s.windowMs / 60_000)} minutes.`,
        details: {
          endpoint_id: endpoint,
          failed: e.failed,
          rejected: e.rejected,
          sample_event_ids: e.sample ? [e.sample] : [],
        },
      });
  if (shop.connection_status !== 'connected') {
    const held = await heldEvents(db, shop.id);
    const n = Number(held?.n ?? 0);
    out.push({
      trigger: 'shop_held',
      subject: shop.id,
      summary: `Shop ${shop.domain} is ${shop.connection_status}: its events are held until Shopify accepts them again (${n} held now).`,
      details: {
        shop_id: shop.id,
        connection_status: shop.connection_status,
        held_events: n,
        sample_event_ids: held?.oldest ? [held.oldest] : [],
        first_release_by: held?.expires == null ? null : new Date(Number(held.expires)).toISOString(),
      },
    });
  }
  const nowf = await recentNoWorkflow(db, shop.id, since);
  if (Number(nowf?.n ?? 0) >= s.noWorkflowThreshold)
    out.push({
      trigger: 'no_workflow',
      subject: shop.id,
      summary: `${Number(nowf?.n)} events ended no_workflow in the last ${Math.round(s.windowMs / 60_000)} minutes: the Flow trigger has no enabled workflow.`,
      details: { count: Number(nowf?.n), sample_event_ids: nowf?.sample ? [nowf.sample] : [] },
    });
  const cutoff = now + 24 * HOUR - bodyRetentionMs(services.config, shop.plan);
  const expiring = await expiringUnreplayed(db, shop.id, { cutoff, horizon: now + 24 * HOUR });
  if (Number(expiring?.n ?? 0) > 0) {
    const held = Number(expiring?.held ?? 0);
    out.push({
      trigger: 'retention_expiring',
      subject: shop.id,
      summary: `${Number(expiring?.n)} events lose their retained bodies within a day: ${Number(expiring?.n) - held} failed or no_workflow and never replayed, ${held} held (a held event not released by then ends failed, FP-H-HEXP).`,
      details: {
        count: Number(expiring?.n),
        held,
        sample_event_ids: expiring?.sample ? [expiring.sample] : [],
      },
    });
  }
  const overlaps = await endingSecretOverlaps(db, shop.id, now, now + HOUR);
  for (const o of overlaps)
    out.push({
      trigger: 'secret_overlap_ending',
      subject: o.id,
      summary: `Endpoint ${o.id}: the previous secret stops working at ${new Date(Number(o.until)).toISOString()}.`,
      details: { endpoint_id: o.id, previous_secret_valid_until: new Date(Number(o.until)).toISOString() },
    });
  return out;
}

export class AlertMonitor extends BackgroundLoop {
  private readonly services: Services;
  readonly settings: AlertSettings;

  constructor(services: Services, settings: Partial<AlertSettings> = {}) {
    super();
    this.services = services;
    this.settings = { ...DEFAULT_ALERT_SETTINGS, ...settings };
  }

  protected wake(): void {
    this.tick();
  }

  private tick(): void {
    if (this.stopped || this.running) return;
    this.runPass(
      () => this.once(),
      this.services.log,
      'alert_error',
      () => (this.timer = setTimeout(() => this.tick(), this.settings.intervalMs)),
    );
  }

  /** One pass: evaluate every shop, then send what is due (to the shops' subscriptions). */
  async once(): Promise<void> {
    const { db } = this.services;
    const shops = await shopsToWatch(db);
    for (const shop of shops) await this.evaluate(shop);
    await this.send();
  }

  private async evaluate(shop: { id: string; domain: string; plan: string; connection_status: string }): Promise<void> {
    const { db } = this.services;
    const now = this.services.now();
    const found = await findings(db, this.services, shop, this.settings, now);
    const keys = new Set(found.map((f) => `${f.trigger}:${f.subject}`));
    for (const f of found) {
      const id = newId('incident', now);
      await db.tx(async (tx) => {
        const opened = await openAlertIncident(tx, {
          id,
          shopId: shop.id,
          trigger: f.trigger,
          subject: f.subject,
          openKey: `${f.trigger}:${f.subject}`,
          summary: f.summary,
          detailsJson: JSON.stringify(f.details),
          now,
        });
        if (opened) await this.queue(tx, shop.id, id, 'opened', now);
      });
    }
    const open = await listOpenAlertIncidents(db, shop.id);
    for (const inc of open) {
      if (keys.has(inc.open_key)) continue;
      await db.tx(async (tx) => {
        if (await resolveAlertIncident(tx, inc.id, now)) await this.queue(tx, shop.id, inc.id, 'resolved', now);
      });
    }
  }

  private async queue(tx: Db, shopId: string, incidentId: string, kind: 'opened' | 'resolved', now: number) {
    await queueAlertNotifications(tx, shopId, incidentId, kind, now, () => newId('notification', now));
  }

  private async send(): Promise<void> {
    const { db } = this.services;
    const now = this.services.now();
    const due = await listDueAlertNotifications(db, now);
    for (const n of due) {
      if (!(await leaseAlertNotification(db, n.id, now, now + 30_000))) continue;
      const sub = await findAlertSubscription(db, n.subscription_id);
      const inc = await findAlertIncident<IncidentRow>(db, n.incident_id);
      if (!sub || !inc) continue;
      // Removed after the message was queued (ADR 1311): it is told nothing more.
      if (sub.removed_at !== null) {
        await cancelAlertNotification(db, n.id);
        continue;
      }
      let error: string | null = null;
      try {
        error = await this.deliver(n.id, n.kind as 'opened' | 'resolved', sub, inc);
      } catch (err) {
        error = err instanceof Error ? err.message.slice(0, 200) : 'failed';
      }
      const attempts = Number(n.attempts) + 1;
      const at = this.services.now();
      if (error === null) await markAlertNotificationSent(db, n.id, attempts, at);
      else
        await markAlertNotificationFailed(db, {
          id: n.id,
          status: attempts >= this.settings.maxAttempts ? 'failed' : 'pending',
          attempts,
          nextAttemptAt: at + this.settings.retryBaseMs * 2 ** (attempts - 1),
          error,
        });
      this.services.log?.info(
        {
          kind: 'alert',
          shop_id: inc.shop_id,
          incident_id: inc.id,
          trigger: inc.trigger,
          channel: sub.channel,
          message: n.kind,
          outcome: error === null ? 'sent' : 'failed',
          attempt: attempts,
        },
        'alert message',
      );
    }
  }

  /** Sends one message; null when the receiver took it (2xx), else why not. */
  private async deliver(
    messageId: string,
    kind: 'opened' | 'resolved',
    sub: AlertSubscriptionRow,
    inc: IncidentRow,
  ): Promise<string | null> {
    const url = this.services.secrets.decrypt(sub.url_enc);
    const incident = incidentView(inc);
    let body: string;
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'Flowport-Alerts' };
    if (sub.channel === 'slack') {
      const icon = kind === 'opened' ? ':rotating_light:' : ':white_check_mark:';
      body = JSON.stringify({
        text: `${icon} Flowport ${kind === 'opened' ? 'incident' : 'resolved'}: ${inc.summary} (${inc.trigger}, ${inc.id})`,
      });
    } else {
      body = JSON.stringify({ type: `incident.${kind}`, timestamp: new Date().toISOString(), data: incident });
      const ts = new Date();
      headers['webhook-id'] = messageId;
      headers['webhook-timestamp'] = String(Math.floor(ts.getTime() / 1000));
      headers['webhook-signature'] = new Webhook(this.services.secrets.decrypt(sub.secret_enc as string)).sign(
        messageId,
        ts,
        body,
      );
    }
    // The name may have been re-pointed since the subscription was made.
    const refused = await privateTargetReason(new URL(url), this.services.config.intents.alertPrivateTargets);
    if (refused !== null) return `refused: ${refused}`;
    const res = await fetch(url, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(10_000),
    });
    await res.body?.cancel().catch(() => {});
    return res.status >= 200 && res.status < 300 ? null : `HTTP ${res.status}`;
  }
}
