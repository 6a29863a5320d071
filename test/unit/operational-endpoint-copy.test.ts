import { cachedOperationalEndpointReads, operationalEndpointCopy } from '../../src/store/operational-endpoint-copy';
import type { OperationalEndpoint, Store } from '../../src/store/types';

/**
 * The endpoints an operational event is raised to come from a copy in memory, not from the table on
 * every raise; an endpoint made, changed or deleted still counts promptly: at once through this
 * store or a NOTIFY, within the copy's window otherwise.
 */

const endpoint = (id: string, enabled = true): OperationalEndpoint => ({ id, url: `https://ops.example.com/${id}`, eventTypes: [], format: 'standard', enabled, createdAt: 't', updatedAt: 't' });

function setUp() {
  const table: OperationalEndpoint[] = [endpoint('opep_a')];
  let readings = 0;
  let now = 0;
  const plain = {
    list: async () => (readings++, table.map((row) => ({ ...row }))),
    create: async () => {
      table.push(endpoint('opep_b'));
      return table.at(-1)!;
    },
    update: async (id: string, patch: Partial<OperationalEndpoint>) => {
      const row = table.find((r) => r.id === id)!;
      Object.assign(row, patch);
      return row;
    },
    delete: async () => true,
  } as unknown as Store['operationalEndpoints'];
  const copy = operationalEndpointCopy(1_000);
  const endpoints = cachedOperationalEndpointReads(plain, copy, () => now);
  return { table, copy, endpoints, readings: () => readings, at: (ms: number) => void (now = ms) };
}

const ids = (list: OperationalEndpoint[]) => list.map((e) => `${e.id}${e.enabled ? '' : ' (off)'}`);

it('reads the table once for any number of raises, together or one after another', async () => {
  const { endpoints, readings, at } = setUp();
  const lists = await Promise.all(Array.from({ length: 50 }, () => endpoints.listCached()));
  at(500);
  for (let i = 0; i < 50; i++) await endpoints.listCached();
  expect(lists.every((list) => ids(list).join() === 'opep_a')).toBe(true);
  expect(readings()).toBe(1);
});

it('an endpoint made or switched off through this store counts at the next raise', async () => {
  const { endpoints, readings } = setUp();
  await endpoints.listCached();
  await endpoints.create({ url: 'https://ops.example.com/opep_b', eventTypes: [], format: 'standard', enabled: true }, 'secret');
  expect(ids(await endpoints.listCached())).toEqual(['opep_a', 'opep_b']);
  await endpoints.update('opep_a', { enabled: false });
  expect(ids(await endpoints.listCached())).toEqual(['opep_a (off)', 'opep_b']);
  expect(readings()).toBe(3);
});

it('unheard (SQLite, another process), a change counts once the copy is a window old', async () => {
  const { table, endpoints, at } = setUp();
  await endpoints.listCached();
  table.push(endpoint('opep_c'));
  at(999);
  expect(ids(await endpoints.listCached())).toEqual(['opep_a']);
  at(1_000);
  expect(ids(await endpoints.listCached())).toEqual(['opep_a', 'opep_c']);
});

it('listening (PostgreSQL), the copy serves until a NOTIFY, however old, and the NOTIFY counts at once', async () => {
  const { table, copy, endpoints, readings, at } = setUp();
  copy.listenerUp();
  await endpoints.listCached();
  table.push(endpoint('opep_c'));
  at(3_600_000);
  expect(ids(await endpoints.listCached())).toEqual(['opep_a']);
  copy.changedAll();
  expect(ids(await endpoints.listCached())).toEqual(['opep_a', 'opep_c']);
  expect(readings()).toBe(2);
  // The listener lost: what was read may be stale, so it is read again.
  copy.listenerDown();
  await endpoints.listCached();
  expect(readings()).toBe(3);
});
