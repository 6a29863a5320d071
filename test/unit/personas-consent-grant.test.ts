import { grantsMore } from '../../src/personas/consent-grant';

/** A consent grant makes the next Personas sync send the profile's current state again; a withdrawal does not. */
describe('grantsMore', () => {
  const prefs = (value: Record<string, unknown>) => JSON.stringify(value);
  it.each([
    ['preferences become known', null, prefs({ ads: false }), true],
    ['a withdrawn category granted', prefs({ ads: false }), prefs({ ads: true }), true],
    ['a new category granted', prefs({ ads: true }), prefs({ ads: true, analytics: true }), true],
    ['unchanged', prefs({ ads: true }), prefs({ ads: true }), false],
    ['a withdrawal', prefs({ ads: true }), prefs({ ads: false }), false],
    ['a category dropped', prefs({ ads: true, analytics: true }), prefs({ ads: true }), false],
    ['only a non-true value changes', prefs({ ads: false }), prefs({ ads: 'yes' }), false],
    ['no preferences now', prefs({ ads: true }), null, false],
  ])('%s', (_, before, after, expected) => {
    expect(grantsMore(before, after)).toBe(expected);
  });
});
