// A console form is sent once (ADR 1451). Every POST form the console renders carries a key of its
// own (`form_key`, new with each render); the POST claims it in the store's idempotency keys (the
// confirmations' table and rules, scoped to this shop, this staff member and this form's route), so
// the same form sent again (a double click, a retry after a lost answer) runs nothing twice: it
// answers where the first went and says so. A refused post releases its key, so the form can be
// corrected and sent again. A secret shown once is never stored with the answer.
import { randomUUID } from 'node:crypto';
import { AppError } from '../../errors/problem.ts';
import { claimKey, completeKey, releaseKey, replayStored, requestHash } from '../../intents/idempotency.ts';
import { type Html, html } from '../merchant/html.ts';
import type { PageCtx, PostAnswer } from './kit.ts';

export const FORM_KEY_FIELD = 'form_key';

/** The hidden field every console POST form carries: a key new with each render. */
export function formKey(): Html {
  return html`<input type="hidden" name="${FORM_KEY_FIELD}" value="${randomUUID()}">`;
}

const KEY_RE = /^[\x21-\x7e]{1,255}$/;

/** Runs a console form's post once per form key; a resend answers the first post's location. */
export async function oncePerForm(
  ctx: PageCtx,
  route: string,
  form: Record<string, unknown>,
  run: () => Promise<PostAnswer>,
): Promise<PostAnswer> {
  const key = typeof form[FORM_KEY_FIELD] === 'string' ? form[FORM_KEY_FIELD].trim() : '';
  if (!KEY_RE.test(key))
    throw new AppError('idempotency_key_missing', {
      detail: `Every console form carries its own key (the hidden field \`${FORM_KEY_FIELD}\`, new with each page): reload the page and send the form again.`,
    });
  const { principal } = ctx.caller;
  const scope = { shopId: principal.shopId, grantId: principal.grantId, operationId: `console ${route}` };
  const fields = Object.entries(form)
    .filter(([k]) => k !== FORM_KEY_FIELD)
    .sort(([a], [b]) => a.localeCompare(b));
  const claim = await claimKey(ctx.services, scope, key, requestHash([ctx.c.req.path, JSON.stringify(fields)]));
  if (claim.kind === 'replay') {
    const first = replayStored(claim) as PostAnswer & { had_secret?: boolean };
    const secret = first.had_secret ? ' Its secret was shown once, with the first answer.' : '';
    return {
      location: first.location,
      message: `This form was sent already; nothing was done again. ${first.message}${secret}`,
      tone: 'warning',
    };
  }
  try {
    const answer = await run();
    const { shown_once, ...kept } = answer;
    await completeKey(ctx.services, scope, key, 200, JSON.stringify({ ...kept, had_secret: Boolean(shown_once) }));
    return answer;
  } catch (err) {
    // Refused: nothing ran, so the same form may be corrected and sent again.
    await releaseKey(ctx.services, scope, key);
    throw err;
  }
}
