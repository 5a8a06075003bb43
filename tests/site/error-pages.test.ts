// Issue 43 item 7: an error-code page says whether the code answers the reader's own call, is a
// state of an event (Shopify's or Flow's answer to a delivery) or Flowport's answer to a sender,
// from one catalog field; refusal pages point MCP clients at tools, not only at URLs.
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOG, type ErrorCode, errorAnswers } from '../../api/src/errors/catalog.ts';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import { renderErrorPage } from '../../scripts/docs/lib/registry-pages.ts';

const ORIGIN = 'http://127.0.0.1:31000';
const page = (code: ErrorCode) => renderErrorPage(code, ERROR_CATALOG[code], ORIGIN);
const tool = (operationId: string) => OPERATIONS.find((op) => op.operationId === operationId)?.mcp?.name as string;

describe('what a code is, from one catalog field', () => {
  it('every code says who meets it: a call, an event, a sender', () => {
    for (const code of Object.keys(ERROR_CATALOG) as ErrorCode[]) {
      const answers = errorAnswers(code);
      expect(answers.length, code).toBeGreaterThan(0);
      for (const a of answers) expect(['call', 'event', 'sender'], code).toContain(a);
    }
    expect(errorAnswers('shop_frozen')).toEqual(['event']);
    expect(errorAnswers('flow_workflow_disabled')).toEqual(['event']);
    expect(errorAnswers('signature_mismatch')).toEqual(['sender']);
    expect(errorAnswers('missing_scope')).toEqual(['call']);
    // Erased bodies end a waiting delivery and refuse a replay preview.
    expect(errorAnswers('event_erased')).toEqual(['event', 'call']);
  });

  it.each(['shop_frozen', 'flow_workflow_disabled'] as const)(
    '%s reads as the state of an event, not a refused call',
    (code) => {
      const text = page(code);
      expect(text).not.toContain('This is a refusal');
      expect(text).not.toMatch(/\| HTTP status \| `409` \|/);
      expect(text).toMatch(/state of an event/i);
      expect(text).toContain('not the answer to an API call');
      // The reader finds it on the event: the tool and the route that read one.
      expect(text).toContain(`\`${tool('getEvent')}\``);
      expect(text).not.toContain('"status": 409');
    },
  );

  it('a sender-side code says the sender was answered and where the merchant sees it', () => {
    const text = page('signature_mismatch');
    expect(text).toContain("Flowport's answer to a sender");
    expect(text).toContain(`\`${tool('listReceipts')}\``);
    expect(text).not.toContain('This is a refusal');
  });

  it('a refusal of a call points MCP clients at tools, HTTP clients at URLs', () => {
    const text = page('missing_scope');
    expect(text).toContain('This is a refusal');
    expect(text).toContain(`\`${tool('getManifest')}\``);
    expect(text).toContain(`\`${tool('getOpenApiOperation')}\``);
    expect(text).toMatch(/answer to a call you made/i);
  });
});
