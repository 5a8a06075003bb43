// The one list shape (ADR 0013): every list operation answers `{ data, page: { next_cursor,
// has_more, limit } }` and pages by keyset with a cursor sealed to the shop and the list (its
// scope), so a garbled cursor, another shop's, or another list's is refused alike.
import type { SecretBox } from '../lib/crypto.ts';
import { AppError } from '../errors/problem.ts';
import { openCursor, sealCursor } from './shared.ts';

/** The `page` of every list answer (PageInfo in operations/read-schemas.ts). */
export interface PageFacts {
  next_cursor: string | null;
  has_more: boolean;
  limit: number;
}

/**
 * The position a list's cursor stands for; null without a cursor. A cursor this server did not
 * seal for `scope`, or whose position `isPosition` rejects, is refused (`invalid_request`, path
 * `cursor`): never read as a position, so a typo cannot page silently to an empty or a full list.
 */
export function cursorPosition(
  secrets: SecretBox,
  scope: string,
  cursor: string | undefined,
  isPosition: (position: string) => boolean,
  hint = 'this shop',
): string | null {
  if (cursor === undefined || cursor === '') return null;
  const position = openCursor(secrets, scope, cursor);
  if (position === null || !isPosition(position)) {
    throw new AppError('invalid_request', {
      detail: `The cursor is not one this list returned for ${hint} (pass \`page.next_cursor\` of the previous page of the same list). Start again without \`cursor\`.`,
      errors: [{ path: 'cursor', message: 'Unrecognised cursor' }],
    });
  }
  return position;
}

/**
 * One page from `rows` read with `LIMIT limit + 1`: the first `limit` rows, and a cursor sealed
 * for `scope` at the last one's position when more follow.
 */
export function pageOf<R>(
  secrets: SecretBox,
  scope: string,
  rows: readonly R[],
  limit: number,
  positionOf: (row: R) => string,
): { rows: R[]; page: PageFacts } {
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    rows: page,
    page: {
      next_cursor: hasMore && last !== undefined ? sealCursor(secrets, scope, positionOf(last)) : null,
      has_more: hasMore,
      limit,
    },
  };
}

/** A cursor scope: the list's name, the shop, and what else the position depends on (the order, a parent). */
export const listScope = (list: string, shopId: string, ...more: string[]): string => [list, shopId, ...more].join(':');
