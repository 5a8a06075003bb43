// Worker settings that parse but cannot work are refused at start, naming the
// variable: a lease no longer than the Shopify request timeout (another worker
// would re-claim a call still in flight and Flow would run the event twice), a
// zero timeout or concurrency, an API version Shopify does not have.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { ENV, loadConfig } from '../../api/src/config.ts';
import { runToEnd } from '../helpers/process.ts';
import { tempDir } from '../helpers/runtime.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('worker configuration', () => {
  it('flowport serve refuses a lease that does not outlast the request timeout, and says why', async () => {
    const dataDir = tempDir('flowport-wcfg-');
    dirs.push(dataDir);
    const { code, out } = await runToEnd(['bin/flowport.js', 'serve'], {
      FLOWPORT_DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      [ENV.workerLeaseMs]: '5000',
      [ENV.workerRequestTimeoutMs]: '10000',
    });
    expect(code).not.toBe(0);
    expect(out).toContain(`${ENV.workerLeaseMs} (5000) must exceed ${ENV.workerRequestTimeoutMs} (10000)`);
    expect(out).not.toMatch(/listening|Grant token/i);
  });

  it.each([
    [{ [ENV.workerLeaseMs]: '10000', [ENV.workerRequestTimeoutMs]: '10000' }, ENV.workerLeaseMs],
    [{ [ENV.workerRequestTimeoutMs]: '0' }, ENV.workerRequestTimeoutMs],
    [{ [ENV.workerConcurrencyPerShop]: '0' }, ENV.workerConcurrencyPerShop],
    [{ [ENV.workerMaxInFlight]: '0' }, ENV.workerMaxInFlight],
    [{ [ENV.shopifyApiVersion]: '2026-1' }, ENV.shopifyApiVersion],
    [{ [ENV.shopifyApiVersion]: 'latest' }, ENV.shopifyApiVersion],
    [{ [ENV.shopifyApiVersion]: '2026-05' }, ENV.shopifyApiVersion],
  ])('refuses %o', (env, named) => {
    expect(() => loadConfig(env)).toThrow(named);
  });

  it('accepts working settings', () => {
    const c = loadConfig({
      [ENV.workerLeaseMs]: '10001',
      [ENV.workerRequestTimeoutMs]: '10000',
      [ENV.shopifyApiVersion]: '2027-01',
    });
    expect(c.worker.leaseMs).toBe(10001);
    expect(c.shopify.apiVersion).toBe('2027-01');
    expect(loadConfig({ [ENV.shopifyApiVersion]: 'unstable' }).shopify.apiVersion).toBe('unstable');
    expect(loadConfig({}).worker.leaseMs).toBeGreaterThan(loadConfig({}).worker.requestTimeoutMs);
  });
});
