/**
 * The viewer declares the API's answers itself (viewer/src/types.ts) so that its build does not
 * type-check the server. This file fails to compile (`npm run typecheck`) when a server type stops
 * providing a field the viewer reads.
 */
import { expect, it } from 'vitest';
import type { ItemDetailResponse } from '../src/http/api.js';
import type * as Server from '../src/service/backlog-service.js';
import type * as Viewer from '../viewer/src/types.js';

/** Compiles only when `Actual` can be used where `Expected` is required. */
type Provides<Expected, Actual extends Expected> = Actual;

type _Search = Provides<Viewer.SearchResponse, Server.SearchResponse>;
type _List = Provides<Viewer.ListResponse, Server.ListResponse>;
type _Summary = Provides<Viewer.ItemSummary, Server.ItemSummary>;
type _Detail = Provides<Viewer.ItemDetailResponse, ItemDetailResponse>;

it('the viewer reads only fields the server provides (checked by tsc)', () => {
  const checked: [_Search?, _List?, _Summary?, _Detail?] = [];
  expect(checked).toEqual([]);
});
