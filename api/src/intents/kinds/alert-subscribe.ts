// Subscribing a channel to operational alerts, governed like every side effect: an action intent.
// Channels: a webhook signed per Standard Webhooks (the receiver verifies it with the
// `standardwebhooks` library and the signing secret shown once at confirmation), or a
// Slack-compatible incoming webhook. The URL is sealed at rest (a Slack URL is a credential) and
// shown only as its origin.
import { randomBytes } from 'node:crypto';
import { AppError } from '../../errors/problem.ts';
import { newId } from '../../ids.ts';
import { privateTargetReason } from '../../lib/outbound-target.ts';
import { insertAlertSubscription, listShopAlertSubscriptions } from '../../store/tables/alerts.ts';
import type { Services } from '../../core/types.ts';
import { ALERT_TRIGGERS } from '../../reads/incidents.ts';
import type { IntentKindDef } from '../types.ts';

export const ALERT_CHANNELS = ['webhook', 'slack'] as const;
export type AlertChannel = (typeof ALERT_CHANNELS)[number];

export interface AlertSubscribeParams {
  channel: AlertChannel;
  /** The URL, sealed by the operation before the intent stores its parameters. */
  url_sealed: string;
  url_origin: string;
  note?: string;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** https anywhere; http only to this machine (a receiver under test, a local relay). */
export function checkAlertUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError('invalid_request', {
      detail: 'url must be an absolute URL.',
      errors: [{ path: 'url', message: 'Not a URL' }],
    });
  }
  const ok =
    !url.username &&
    !url.password &&
    (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)));
  if (!ok)
    throw new AppError('invalid_request', {
      detail: 'url must be https (http only to localhost), without credentials in it.',
      errors: [{ path: 'url', message: 'Not an https URL' }],
    });
  return url;
}

/** checkAlertUrl, and the host must be on the public internet unless the deployment allows private targets. */
export async function checkAlertTarget(services: Services, raw: string): Promise<URL> {
  const url = checkAlertUrl(raw);
  const reason = await privateTargetReason(url, services.config.intents.alertPrivateTargets);
  if (reason) throw new AppError('alert_target_private', { detail: reason });
  return url;
}

/** The URL is sealed before the intent stores its parameters (a Slack URL is a credential). */
export function sealAlertUrl(services: Services, params: Record<string, unknown>): Record<string, unknown> {
  const { url, ...rest } = params;
  const origin = checkAlertUrl(String(url)).origin;
  return { ...rest, url_sealed: services.secrets.encrypt(String(url)), url_origin: origin };
}

export const alertSubscribeKind: IntentKindDef<AlertSubscribeParams> = {
  kind: 'alert_subscribe',
  label: 'alert subscription',
  async inspect(kc, _target, params) {
    const url = await checkAlertTarget(kc.services, kc.services.secrets.decrypt(params.url_sealed));
    const existing = await listShopAlertSubscriptions(kc.db, kc.shop.id);
    return {
      targetType: 'shop',
      targetId: kc.shop.id,
      fingerprint: { subscriptions: existing.map((s) => s.id) },
      preview: {
        summary: `Send operational alerts of ${kc.shop.domain} to a ${params.channel === 'slack' ? 'Slack-compatible incoming webhook' : 'webhook signed per Standard Webhooks'} at ${url.origin}.`,
        target: { shop_id: kc.shop.id, shop_domain: kc.shop.domain },
        current_config: {
          subscriptions: existing.map((s) => ({ id: s.id, channel: s.channel, origin: s.url_origin })),
        },
        effects: [
          `Adds a ${params.channel} subscription; its URL is stored sealed and shown only as ${url.origin}.`,
          ...(params.channel === 'webhook'
            ? [
                'Creates a signing secret (`whsec_…`), shown once in the confirmation response: the receiver verifies each message with it.',
              ]
            : []),
          'Each incident is sent once when it opens and once when it clears, retried with backoff if the receiver fails.',
        ],
        warnings: ['Alerts name shops, endpoints and event ids and counts; never bodies, secrets or tokens.'],
        details: { channel: params.channel, origin: url.origin, triggers: ALERT_TRIGGERS },
      },
    };
  },
  async execute(kc, intent, params) {
    const url = await checkAlertTarget(kc.services, kc.services.secrets.decrypt(params.url_sealed));
    const id = newId('alert', kc.now);
    const secret = params.channel === 'webhook' ? `whsec_${randomBytes(24).toString('base64')}` : null;
    await insertAlertSubscription(kc.db, {
      id,
      shopId: kc.shop.id,
      channel: params.channel,
      urlEnc: kc.services.secrets.encrypt(url.toString()),
      urlOrigin: url.origin,
      secretEnc: secret ? kc.services.secrets.encrypt(secret) : null,
      note: params.note ?? null,
      createdByGrant: intent.confirmed_by_grant ?? kc.principal.grantId,
      now: kc.now,
    });
    return {
      result: { subscription_id: id, channel: params.channel, origin: url.origin },
      ...(secret ? { once: { signing_secret: secret } } : {}),
    };
  },
};
