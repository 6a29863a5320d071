import { OpenedValues } from '../../src/privacy/opened-values';

/** An opener that counts how often it decrypts. */
function counting() {
  const opened: string[] = [];
  return { opened, open: (sealed: string) => () => (opened.push(sealed), `plain(${sealed})`) };
}

describe('sealed values already opened', () => {
  it('opens a row read again unchanged once', () => {
    const values = new OpenedValues<string>(10);
    const { opened, open } = counting();
    expect(values.open('dst_1', 'v1', open('v1'))).toBe('plain(v1)');
    expect(values.open('dst_1', 'v1', open('v1'))).toBe('plain(v1)');
    expect(opened).toEqual(['v1']);
  });

  it('opens a changed row anew (a rotated secret, a re-wrapped key), and the old text again if it comes back', () => {
    const values = new OpenedValues<string>(10);
    const { opened, open } = counting();
    values.open('dst_1', 'v1', open('v1'));
    expect(values.open('dst_1', 'v2', open('v2'))).toBe('plain(v2)');
    expect(values.open('dst_1', 'v1', open('v1'))).toBe('plain(v1)');
    expect(opened).toEqual(['v1', 'v2', 'v1']);
  });

  it('keeps rows apart by id', () => {
    const values = new OpenedValues<string>(10);
    const { opened, open } = counting();
    values.open('a', 'same', open('same'));
    values.open('b', 'same', open('same'));
    expect(opened).toEqual(['same', 'same']);
  });

  it('remembers nothing of a value that did not open', () => {
    const values = new OpenedValues<string>(10);
    const { opened, open } = counting();
    expect(() =>
      values.open('a', 'bad', () => {
        throw new Error('does not authenticate');
      }),
    ).toThrow('does not authenticate');
    values.open('a', 'bad', open('bad'));
    expect(opened).toEqual(['bad']);
  });

  it('drops what it opened for a row deleted here', () => {
    const values = new OpenedValues<string>(10);
    const { opened, open } = counting();
    values.open('a', 'v1', open('v1'));
    values.forget(['a']);
    values.open('a', 'v1', open('v1'));
    expect(opened).toEqual(['v1', 'v1']);
  });

  it('keeps at most its limit, the oldest going first', () => {
    const values = new OpenedValues<string>(2);
    const { opened, open } = counting();
    values.open('a', 'a', open('a'));
    values.open('b', 'b', open('b'));
    values.open('c', 'c', open('c'));
    values.open('b', 'b', open('b'));
    values.open('a', 'a', open('a'));
    expect(opened).toEqual(['a', 'b', 'c', 'a']);
  });
});

describe('opened plaintext does not outlive its row in other processes', () => {
  afterEach(() => jest.useRealTimers());

  it('forgets every value its maxAge after it was opened, with no read to notice (SQLite: no notifications)', () => {
    jest.useFakeTimers();
    const values = new OpenedValues<string>(10, 60_000);
    const { opened, open } = counting();
    values.open('h1_subject', 'wrapped', open('wrapped'));
    jest.advanceTimersByTime(59_000);
    expect(values.size).toBe(1);
    jest.advanceTimersByTime(31_000);
    expect(values.size).toBe(0);
    values.open('h1_subject', 'wrapped', open('wrapped'));
    expect(opened).toEqual(['wrapped', 'wrapped']);
  });

  it('opens a value used all the time anew once its maxAge is up', () => {
    let now = 0;
    const values = new OpenedValues<string>(10, 1_000, () => now);
    const { opened, open } = counting();
    for (now = 0; now <= 2_500; now += 100) values.open('dst_1', 'v1', open('v1'));
    expect(opened).toEqual(['v1', 'v1', 'v1']);
    values.forgetAll();
  });

  it('forgets everything when told changes may have gone unseen', () => {
    const values = new OpenedValues<string>(10);
    const { open } = counting();
    values.open('a', 'a', open('a'));
    values.open('b', 'b', open('b'));
    values.forgetAll();
    expect(values.size).toBe(0);
  });
});
