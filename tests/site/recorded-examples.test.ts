// Examples come from the product (issue 29, point 1; ADR 0009): the recording scenarios run again
// against a real Flowport in sandbox mode (real HTTP on loopback, a real SQLite file), and every
// committed recording in openapi/examples/ must equal what the product answers now, after the
// same normalisation. The contract carries them as its examples, and no secret leaks into them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  readRecordings,
  RECORDINGS_DIR,
  recordedSuccess,
  recordingsText,
} from '../../api/src/http/openapi-examples.ts';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import { recordExamples, staleRecordings } from '../../scripts/docs/lib/recordings.ts';
import { REPO_ROOT } from '../helpers/process.ts';

describe('recorded examples', { timeout: 120_000 }, () => {
  it('openapi/examples/ matches what the product answers now (else run `npm run docs:record`)', async () => {
    const fresh = await recordExamples();
    const stale = staleRecordings(fresh);
    const diffs = stale.map((file) => {
      const want = recordingsText(fresh)[file] ?? '(no longer recorded)';
      let have = '(missing)';
      try {
        have = readFileSync(join(RECORDINGS_DIR, file), 'utf8');
      } catch {}
      const a = have.split('\n');
      const b = want.split('\n');
      const at = a.findIndex((line, i) => line !== b[i]);
      return `${file}, first difference at line ${at + 1}:\n  recorded: ${a[at]}\n  product:  ${b[at]}`;
    });
    expect(
      stale,
      `The recordings no longer match what the product answers. Run \`npm run docs:record\` (it also regenerates the OpenAPI contract), check the diff and commit it.\n${diffs.join('\n')}`,
    ).toEqual([]);
  });

  it('covers intake, every read, every preview and its confirmation, and the main refusals', () => {
    const recordings = readRecordings();
    const ok = (file: string) => (recordings[file] ?? []).some((e) => e.response.status < 300);
    for (const op of OPERATIONS) expect(ok(op.operationId), `${op.operationId} has a recorded success`).toBe(true);
    expect(recordings.intake?.map((e) => e.response.status)).toEqual([202, 200, 401]);
    const confirmed = (recordings.confirmActionIntent ?? [])
      .filter((e) => e.response.status === 200)
      .map((e) => e.name);
    const previews = OPERATIONS.filter((op) => op.operationId.startsWith('preview'));
    expect(confirmed).toHaveLength(previews.length);
    const codes = Object.values(recordings)
      .flat()
      .map((e) => (e.response.body as { code?: string } | null)?.code)
      .filter(Boolean);
    expect(codes).toEqual(
      expect.arrayContaining(['missing_scope', 'unknown_field', 'invalid_request', 'not_found', 'missing_token']),
    );
  });

  it('request examples are bodies a user would send; the committed contract carries the recordings', () => {
    const doc = JSON.parse(readFileSync(join(REPO_ROOT, 'openapi/agent-operations.openapi.json'), 'utf8'));
    const recordings = readRecordings();
    for (const op of OPERATIONS) {
      const entry = doc.paths[op.path][op.method];
      const recorded = recordedSuccess(recordings, op.operationId);
      if (op.request.body) {
        const example = entry.requestBody.content['application/json'].example;
        expect(example, op.operationId).toEqual(recorded?.request.body);
        expect(example, op.operationId).not.toHaveProperty('payload_override');
        expect(example, op.operationId).not.toHaveProperty('acknowledge_recent_delivery');
      }
      const status = String(recorded?.response.status);
      const examples = entry.responses[status].content['application/json'].examples;
      expect(
        Object.values(examples).map((e: any) => e.value),
        op.operationId,
      ).toContainEqual(recorded?.response.body);
    }
  });

  it('holds no secret: tokens, signing secrets and share links are placeholders', () => {
    const all = Object.values(recordingsText(readRecordings())).join('\n');
    expect(all).not.toMatch(/fpg_[0-9A-Za-z]{20,}/);
    expect(all).not.toMatch(/whsec_[A-Za-z0-9/+=]{16,}/);
    expect(all).not.toMatch(/127\.0\.0\.1/);
    expect(all).toContain('Bearer <GRANT_TOKEN>');
  });
});
