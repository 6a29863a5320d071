import { WriteKeyDirectory, writeKeyDirectoryReads } from '../../src/store/write-key-directory';
import type { Source, Store } from '../../src/store/types';
import { hashWriteKey } from '../../src/store/write-keys';

/**
 * When the API's write-key directory must read the sources table again before it
 * answers: each step is one event at a time the test gives; `read` is a reading of the table begun
 * at one step and handed back at another.
 */
type Step = { up: true } | { down: true } | { changed: true } | { begin: string } | { finish: string; at: number } | { at: number; needsReading: boolean };

const cases: [string, Step[]][] = [
  ['reads before its first answer', [{ at: 0, needsReading: true }]],
  ['unheard (SQLite), a reading serves for the window and no longer', [
    { begin: 'r' }, { finish: 'r', at: 0 }, { at: 999, needsReading: false }, { at: 1_000, needsReading: true },
  ]],
  ['listening, a reading serves until a change is heard, however old', [
    { up: true }, { begin: 'r' }, { finish: 'r', at: 0 }, { at: 3_600_000, needsReading: false }, { changed: true }, { at: 3_600_001, needsReading: true },
  ]],
  ['a reading begun before a change is not current, even if it comes back after it', [
    { up: true }, { begin: 'r' }, { changed: true }, { finish: 'r', at: 10 }, { at: 11, needsReading: true },
  ]],
  ['the listener going up or down makes what was read before stale', [
    { begin: 'r' }, { finish: 'r', at: 0 }, { up: true }, { at: 1, needsReading: true },
    { begin: 's' }, { finish: 's', at: 2 }, { down: true }, { at: 3, needsReading: true },
  ]],
  ['listener down again: readings age out after the window', [
    { up: true }, { down: true }, { begin: 'r' }, { finish: 'r', at: 0 }, { at: 999, needsReading: false }, { at: 1_000, needsReading: true },
  ]],
];

it.each(cases)('%s', (_name, steps) => {
  const directory = new WriteKeyDirectory(1_000);
  const begun = new Map<string, number>();
  for (const step of steps) {
    if ('up' in step) directory.listenerUp();
    else if ('down' in step) directory.listenerDown();
    else if ('changed' in step) directory.changedAll();
    else if ('begin' in step) begun.set(step.begin, directory.readingGeneration);
    else if ('finish' in step) directory.read(new Map(), begun.get(step.finish)!, step.at);
    else expect(directory.needsReading(step.at)).toBe(step.needsReading);
  }
});

const source = (id: string): Source => ({ id, name: id, writeKeyHint: 'hint', createdAt: '2026-11-28T00:00:00.000Z', labels: [] });

it('answers known keys from one reading shared by every caller, and reads again once a lookup finds a key it had not heard of', async () => {
  const table = new Map([[hashWriteKey('key-a'), source('src_a')]]);
  let readings = 0;
  const readAll = async () => (readings++, new Map(table));
  const plain = { findByWriteKey: async (key: string) => (key === 'key-b' ? source('src_b') : undefined) } as unknown as Store['sources'];
  let now = 0;
  const sources = writeKeyDirectoryReads(plain, readAll, new WriteKeyDirectory(1_000), () => now);
  const answers = await Promise.all([sources.knownWriteKey!('key-a'), sources.knownWriteKey!('key-a'), sources.knownWriteKey!('unknown')]);
  expect(answers.map((a) => a?.id)).toEqual(['src_a', 'src_a', undefined]);
  expect(readings).toBe(1);
  now = 10;
  // Made a moment ago elsewhere: the lookup finds it, and the next answer comes from a new reading.
  table.set(hashWriteKey('key-b'), source('src_b'));
  expect((await sources.findByWriteKey('key-b'))?.id).toBe('src_b');
  expect((await sources.knownWriteKey!('key-b'))?.id).toBe('src_b');
  expect(readings).toBe(2);
});
