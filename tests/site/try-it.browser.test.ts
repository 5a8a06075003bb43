// "Try it" from the interactive reference against the real, co-deployed API (issue 29, point 5):
// the one Flowport process serves the built site and /agent/v1/*. In Chromium, Scalar's Test
// Request sends every GET operation of the contract, and one preview (POST), with a grant token
// typed into Scalar's authentication, and each gets a 2xx from the real product.
//
// How Scalar (@scalar/api-reference 1.46) behaves, and what the test waits on:
// - "Test Request" in an operation's section opens the API client as a modal dialog; its Send
//   button is named "Send <METHOD> request to <server><path>" (a second "Send Request" button sits
//   in the empty response pane).
// - Send is disabled exactly while a request is in flight (its loading state starts on the client's
//   "request sent" event and stops on "request complete"). Closing the modal before the response is
//   rendered leaves that state behind, and the next operation's Send stays disabled: so after each
//   send the test waits for the response pane to show the status, never for a fixed time.
// - The bearer token is one field for the document: typed once, every later operation has it.
// - Path variables are CodeMirror editors (textboxes named "<name> value"), pre-filled with the
//   contract's example (a recorded id, which this fresh store does not have), so the test types real ids.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import { REPO_ROOT } from '../helpers/process.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { launchBrowser } from './helpers/browser.ts';
import { ensureSiteBuilt } from './helpers/site.ts';

type Json = Record<string, any>;
const doc = JSON.parse(readFileSync(join(REPO_ROOT, 'openapi/agent-operations.openapi.json'), 'utf8')) as Json;

interface TryIt {
  operationId: string;
  method: string;
  path: string;
  tag: string;
}

const operations: TryIt[] = Object.entries(doc.paths as Json).flatMap(([path, item]) =>
  Object.entries(item as Json).map(([method, op]) => ({
    operationId: op.operationId as string,
    method: method.toUpperCase(),
    path,
    tag: op.tags[0] as string,
  })),
);
const gets = operations.filter((o) => o.method === 'GET');
/**
 * The GETs sent through Scalar: every one with path variables (typed into CodeMirror editors, the
 * fiddly part) and the first of each tag without any. Scalar sends them all the same way, and every
 * operation's answer is checked against the contract in reads/openapi-conformance.test.ts; sending
 * all 22 made this the suite's second-longest file.
 */
const sent = gets.filter(
  (o, i) => o.path.includes('{') || gets.findIndex((g) => g.tag === o.tag && !g.path.includes('{')) === i,
);
const preview = operations.find((o) => o.operationId === 'previewTestEvent') as TryIt;

let server: TestServer;
let browser: Browser;
/** Real ids for the path variables, made through the API before the browser starts. */
const ids: Record<string, string> = {};

async function api(method: string, path: string, body?: unknown): Promise<Json> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${server.sandbox?.grant_token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json()) as Json;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

beforeAll(async () => {
  await ensureSiteBuilt();
  server = await startTestServer();
  const creds = server.sandbox;
  if (!creds) throw new Error('the sandbox is needed');
  // An event, delivered: its id, its receipt, and a bulk replay of it (whose items are listed).
  const body = creds.example_body;
  const signature = `sha256=${createHmac('sha256', creds.signing_secret).update(body).digest('hex')}`;
  const ack = (await (
    await fetch(creds.ingest_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [creds.signature_header]: signature },
      body,
    })
  ).json()) as Json;
  for (let i = 0; i < 400; i++) {
    if ((await api('GET', `/agent/v1/events/${ack.event_id}`)).state === 'delivered') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const bulk = await api('POST', '/agent/v1/bulk-replay-intents', {
    state: 'delivered',
    acknowledge_recent_delivery: true,
  });
  Object.assign(ids, {
    event_id: ack.event_id,
    receipt_id: ack.receipt_id,
    endpoint_id: creds.endpoint_id,
    intent_id: bulk.id,
  });
  browser = await launchBrowser();
}, 900_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The modal's Send button for `o` (its name says the method, server and path it sends to). */
function sendButton(dialog: Locator, o: TryIt): Locator {
  const name = new RegExp(`^send ${o.method} request to ${escapeRegExp(server.url)}${escapeRegExp(o.path)}$`, 'i');
  return dialog.getByRole('button', { name });
}

/** Opens an operation's Test Request modal and returns the dialog, once it shows that operation. */
async function openTryIt(page: Page, o: TryIt): Promise<Locator> {
  const section = page.locator(`[id="api-1/tag/${o.tag}/${o.method}${o.path}"]`);
  await section
    .getByRole('button', { name: /test request/i })
    .first()
    .click();
  const dialog = page.getByRole('dialog');
  await sendButton(dialog, o).waitFor();
  return dialog;
}

/** The modal's Code Snippet panel, opened (it stays open for the next operation once opened). */
async function codeSnippet(dialog: Locator): Promise<Locator> {
  const toggle = dialog.getByRole('button', { name: /code snippet/i });
  if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
  await expect.poll(() => toggle.getAttribute('aria-expanded')).toBe('true');
  return dialog.locator(`[id="${await toggle.getAttribute('aria-controls')}"]`);
}

/**
 * Replaces a path variable's text with `value`, then waits until Scalar has taken it: the table
 * hands edits to its store through a debounced event (328 ms in 1.46), and Send uses the store, so
 * the test waits until the generated code snippet (rendered from the store) has the value.
 */
async function typeVariable(page: Page, dialog: Locator, name: string, value: string): Promise<void> {
  const box = dialog.getByRole('textbox', { name: `${name} value`, exact: true });
  await box.click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.type(value);
  await expect.poll(() => box.innerText()).toBe(value);
  const snippet = await codeSnippet(dialog);
  await expect.poll(() => snippet.innerText(), { timeout: 30_000 }).toContain(value);
}

/** Sends from the modal and returns the HTTP status the product answered; waits for Scalar to show it. */
async function send(page: Page, dialog: Locator, o: TryIt): Promise<number> {
  const button = sendButton(dialog, o);
  const pattern = new RegExp(`^${o.path.replace(/\{\w+\}/g, '[^/]+')}$`);
  const answered = page.waitForResponse(
    (r) => r.request().method() === o.method && pattern.test(new URL(r.url()).pathname),
  );
  await button.click();
  const response = await answered;
  expect(new URL(response.url()).origin).toBe(server.url);
  // Scalar has rendered the answer (and left its loading state) once the pane shows the status.
  await dialog
    .getByRole('region', { name: 'Response' })
    .getByText(new RegExp(`^${response.status()}\\b`))
    .first()
    .waitFor();
  await expect.poll(() => button.isEnabled()).toBe(true);
  return response.status();
}

describe('Scalar try it', { timeout: 600_000 }, () => {
  it('sends GETs of every tag (each with path variables) and one preview through Test Request with a grant token, each answered 2xx', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.setDefaultTimeout(60_000);
    await page.goto(`${server.url}/reference/openapi/`, { waitUntil: 'commit', timeout: 120_000 });
    await page.locator('#fp-scalar-root').getByText('Read the manifest').first().waitFor({ timeout: 180_000 });
    const token = server.sandbox?.grant_token as string;

    const statuses: Record<string, number> = {};
    for (const o of [...sent, preview]) {
      const dialog = await openTryIt(page, o);
      const secured = (doc.paths[o.path][o.method.toLowerCase()].security ?? []).length > 0;
      if (secured) {
        const field = dialog.getByLabel('Bearer Token');
        if ((await field.inputValue()) !== token) await field.fill(token);
      }
      for (const name of [...o.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string)) {
        // The operation id example (getReceipt) is real everywhere; ids are typed.
        if (ids[name]) await typeVariable(page, dialog, name, ids[name] as string);
      }
      statuses[o.operationId] = await send(page, dialog, o);
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
    }

    const expected = Object.fromEntries([...sent, preview].map((o) => [o.operationId, 'a 2xx']));
    const got = Object.fromEntries(
      Object.entries(statuses).map(([k, s]) => [k, s >= 200 && s < 300 ? 'a 2xx' : `HTTP ${s}`]),
    );
    expect(got).toEqual(expected);
    expect(statuses.previewTestEvent).toBe(201);
    // Every tag with a GET was sent, and the GETs read from the contract are the registry's.
    expect(new Set(sent.map((o) => o.tag))).toEqual(new Set(gets.map((o) => o.tag)));
    expect(gets.map((o) => o.operationId).sort()).toEqual(
      OPERATIONS.filter((op) => op.method === 'get')
        .map((op) => op.operationId)
        .sort(),
    );
    await page.close();
  });
});
