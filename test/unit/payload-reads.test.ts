import { PayloadReadsRecorded } from '../../src/api/access/payload-reads';

/** Which reads of decrypted payloads get an audit row: the first of each token, action and target a minute. */
type Read = [tokenId: string | null, action: string, target: string | null, at: number, recorded: boolean];

const cases: [string, Read[]][] = [
  ['records the first read of a target', [['tok_a', 'payload.read', 'src/m1', 0, true]]],
  ['records a token reading the same target again only once the minute has passed', [
    ['tok_a', 'payload.read', 'src/m1', 0, true], ['tok_a', 'payload.read', 'src/m1', 59_999, false], ['tok_a', 'payload.read', 'src/m1', 60_000, true],
  ]],
  ['records each target, each token and each action on its own', [
    ['tok_a', 'payload.read', 'src/m1', 0, true], ['tok_a', 'payload.read', 'src/m2', 1, true], ['tok_b', 'payload.read', 'src/m1', 2, true], ['tok_a', 'payload.decode', null, 3, true],
  ]],
  ['records a flood of decodes by one token as one row a minute', [
    ['tok_a', 'payload.decode', null, 0, true], ...Array.from({ length: 50 }, (_, i): Read => ['tok_a', 'payload.decode', null, 1 + i * 1_000, false]), ['tok_a', 'payload.decode', null, 60_000, true],
  ]],
  ['keeps the token-less loopback codec apart from every token', [['tok_a', 'payload.decode', null, 0, true], [null, 'payload.decode', null, 1, true], [null, 'payload.decode', null, 2, false]]],
];

it.each(cases)('%s', (_name, reads) => {
  const recorded = new PayloadReadsRecorded(60_000);
  for (const [tokenId, action, target, at, expected] of reads) expect([tokenId, action, target, at, recorded.due(tokenId, action, target, at)]).toEqual([tokenId, action, target, at, expected]);
});
