// Re-exports used by intake tests (kept in one place so imports stay short).
export { rotateEndpointSecret, setEndpointStatus } from '../../api/src/services/endpoints.ts';
export { standardWebhooksKey as standardWebhooksKeyForTest } from '../../api/src/intake/verify.ts';
