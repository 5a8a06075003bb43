import type { ErrorDef } from '../catalog.ts';
import { DEFAULTS, ENV } from '../../config.ts';

// Generic API errors.
export const API_ERRORS = {
  // ---- generic API ----
  not_found: {
    status: 404,
    title: 'Resource not found',
    retry: 'no',
    area: 'api',
    description:
      'The route or the object does not exist, or it belongs to another shop. Flowport answers 404 for objects outside your grant so ids of other shops are never confirmed.',
    fix: 'Check the id and the path against the OpenAPI contract. Ids are prefixed (`evt_`, `ep_`, `rcpt_` …) and case-sensitive.',
  },
  route_not_found: {
    status: 404,
    title: 'No such operation',
    // The `capability` refusal layer: the operation is not one this edition offers.
    layer: 'capability',
    retry: 'no',
    area: 'api',
    description: 'No Agent Operations route matches this method and path.',
    fix: 'Read the manifest at `/agent/v1/manifest` and the OpenAPI contract for the list of operations.',
  },
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed',
    retry: 'no',
    area: 'api',
    description: 'The path exists but does not accept this HTTP method.',
    fix: 'Use the method the OpenAPI contract lists for this path.',
  },
  invalid_request: {
    status: 400,
    title: 'Invalid request',
    retry: 'no',
    area: 'api',
    description:
      'A path parameter, query parameter, header or body field failed validation. The `errors` array names each field and what was wrong.',
    fix: 'Correct the fields listed in `errors` and send the request again.',
  },
  unknown_field: {
    status: 400,
    title: 'Unknown field',
    retry: 'no',
    area: 'api',
    description:
      'The request named a body field or query parameter this operation does not define. Flowport refuses it rather than ignore it, so a misspelt field never silently changes nothing. `errors` names each unknown field by its path, and `unknown_fields` says where it was (`body` or `query`) and, when a defined name is close (another case or separator style, or a small typo), the name it probably meant (`did_you_mean`). Over MCP the same applies to tool arguments; the CLI refuses an unknown option the same way.',
    fix: 'Rename or remove the fields listed in `errors` (use `did_you_mean` when given) and send the request again. The OpenAPI contract lists every field an operation takes; its request bodies are closed (`additionalProperties: false`).',
  },
  invalid_json: {
    status: 400,
    title: 'Body is not valid JSON',
    retry: 'no',
    area: 'api',
    description: 'The request body could not be parsed as JSON.',
    fix: 'Send a UTF-8 JSON body with `Content-Type: application/json`.',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    retry: 'no',
    area: 'api',
    description:
      'The body was sent with a content type Flowport does not accept here, or compressed (a `Content-Encoding` such as `gzip`): sender intake verifies the signature over the body exactly as sent and does not inflate it.',
    fix: 'Send `Content-Type: application/json` with an uncompressed UTF-8 JSON body (turn off request compression on the sender).',
  },
  payload_too_large: {
    status: 413,
    title: 'Payload too large',
    retry: 'no',
    area: 'api',
    description:
      "The request body is larger than the limit for this route: 1 MiB for Agent Operations requests and MCP messages, 1 MiB by default for sender intake and Shopify compliance webhooks, 16 KiB for OAuth requests and the merchant page's forms (every route has one). A declared `Content-Length` over the limit is refused before the body is read; a body sent without one is cut off at the limit. Either way the connection closes.",
    fix: 'Send a smaller body. For sender intake, trim the event to the fields your Flow workflow needs.',
  },
  headers_too_large: {
    status: 431,
    title: 'Request headers too large',
    retry: 'no',
    area: 'api',
    description:
      "The request's headers together are larger than Node's limit (16 KiB), so the request was not read. The connection is closed.",
    fix: 'Send fewer or shorter headers: large cookies or tokens copied into headers are the usual cause.',
  },
  request_timeout: {
    status: 408,
    title: 'Request not received in time',
    retry: 'sender',
    area: 'api',
    description: `The request's headers and body did not all arrive within Flowport's request timeout (${DEFAULTS.httpRequestTimeoutMs / 1000} seconds by default, \`${ENV.httpRequestTimeoutMs}\`), so it was not processed and the connection was closed. At an ingest URL nothing was stored and the refusal has a receipt. Usually a stalled network or proxy, or a client that announced a longer body (\`Content-Length\`) than it sent.`,
    fix: 'Retry the request. Send the whole body right after the headers, with a `Content-Length` equal to the bytes sent (or `Transfer-Encoding: chunked` with a final empty chunk). If a proxy sits in front of Flowport, check that it forwards the body without buffering it for longer than the timeout.',
  },
  malformed_http: {
    status: 400,
    title: 'Malformed HTTP request',
    retry: 'no',
    area: 'api',
    description:
      'The request could not be parsed as HTTP/1.1 (for example both `Transfer-Encoding` and `Content-Length`, a broken chunked body, or invalid characters in a header), so it was not read. The connection is closed. At an ingest URL, framing that broke in the body stores nothing and the refusal has a receipt.',
    fix: 'Fix the HTTP client or proxy that sent it: send either `Content-Length` or `Transfer-Encoding: chunked`, with a body of exactly that length.',
  },
  internal_error: {
    status: 500,
    title: 'Internal error',
    retry: 'client',
    area: 'api',
    description:
      'Flowport failed while handling the request. Nothing was half-written: the operation either completed or did not start.',
    fix: 'Retry with backoff. If it persists, share the `request_id` with support.',
  },
  metrics_not_allowed: {
    status: 403,
    title: 'The metrics token is wrong',
    retry: 'no',
    area: 'api',
    description:
      '`GET /metrics` was sent an `Authorization` header, and it did not carry the metrics token this process is configured with (or no token is configured). A request that sends credentials is judged by them alone, even from this machine.',
    fix: `Send \`Authorization: Bearer <METRICS_TOKEN>\` with the value of \`${ENV.metricsToken}\` set on this process, or scrape from the same machine without an \`Authorization\` header. See the metrics page under Operate.`,
  },
  service_unavailable: {
    status: 503,
    title: 'Service not ready',
    retry: 'client',
    area: 'api',
    description: 'The process is starting or shutting down, or its store is unavailable.',
    fix: 'Retry after a few seconds with backoff.',
  },
  invalid_characters: {
    status: 400,
    title: 'Control characters not allowed',
    retry: 'no',
    area: 'api',
    description:
      'An id, filter, name or other text field holds a NUL (U+0000) or another control character (U+0001–U+001F or U+007F; tab, line feed and carriage return are allowed only in free text such as notes). No id or name Flowport issues contains one, and a database cannot store a NUL in text, so the request is refused before it reaches the store. Every route checks the same way before anything else: no control character in the path, the query string or a form field, and no NUL anywhere in a JSON body (keys included). The `errors` array names each field. At intake, an event whose type or external id holds one is refused with this code and a receipt; the raw body itself may hold any escaped character.',
    fix: 'Remove the control characters from the fields listed in `errors` (check how the value was built: a NUL often comes from a C string or a binary field copied as text) and send the request again.',
  },
  store_full: {
    status: 503,
    title: 'Storage full',
    retry: 'client',
    area: 'api',
    description:
      "Flowport's store has no space left to write (the data directory's disk is full, SQLite reported SQLITE_FULL, or PostgreSQL reported `disk_full`, SQLSTATE 53100). Nothing from this request was stored, and what was acknowledged before is safe. `/readyz` reports the store as not writable (`checks.store_writable: false`) until a write succeeds again. Agent Operations reads are metered, so they are refused the same way meanwhile.",
    fix: 'Retry after the `Retry-After` seconds; a sender retries as it does for any 5xx. An operator frees space on the volume that holds the data directory (or the PostgreSQL data volume); writing resumes by itself once space is back.',
  },
  store_unreachable: {
    status: 503,
    title: 'Store unreachable at startup',
    retry: 'no',
    area: 'api',
    description:
      'Flowport could not open its store when it started: PostgreSQL at `FLOWPORT_DATABASE_URL` refused the connection, does not exist, is not resolvable or refused the credentials. The process printed one line naming the target (password redacted) and exited with a non-zero status. It is never an HTTP answer.',
    fix: 'Check that PostgreSQL is running and reachable from this host, that the database in the URL exists (`createdb <DATABASE>`) and that the user and password are right; then start Flowport again. Leave `FLOWPORT_DATABASE_URL` unset to use SQLite in the data directory.',
  },
  data_dir_unwritable: {
    status: 500,
    title: 'Data directory not writable at startup',
    retry: 'no',
    area: 'api',
    description:
      'Flowport could not create or write its data directory (`FLOWPORT_DATA_DIR`, default `./data`): it holds the SQLite database, the secret key and the sandbox credentials. The process printed one line naming the directory and the system error (for example `EACCES`, `EROFS`, `ENOTDIR`) and exited with a non-zero status. It is never an HTTP answer.',
    fix: 'Point `FLOWPORT_DATA_DIR` at a directory the user running Flowport can write (Flowport creates it 0700 when missing), or fix the ownership or mount of the one named; then start Flowport again.',
  },
  port_unavailable: {
    status: 500,
    title: 'Port not available at startup',
    retry: 'no',
    area: 'api',
    description:
      'Flowport could not listen on `HOST`:`PORT`: another process already listens there (`EADDRINUSE`) or this user may not bind it (`EACCES`, ports below 1024). The process printed one line naming the address and exited with a non-zero status. It is never an HTTP answer.',
    fix: 'Stop the other process, or start Flowport on another port (`PORT=8788 npm start`, `npx flowport serve --port 8788`).',
  },
} as const satisfies Record<string, ErrorDef>;
