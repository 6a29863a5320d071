import { transform } from '@segment/tsub';
import { sampleKeeps, uniformFromValue } from '../../src/rules/sampling';

describe('sampleKeeps (Segment\'s deterministic sampler)', () => {
  const ids = Array.from({ length: 2000 }, (_, n) => `msg-${n}`);

  it('reads every value as a number in (0, 1), the same one every time', () => {
    for (const id of ids.slice(0, 200)) {
      const u = uniformFromValue(id);
      expect(u).toBeGreaterThan(0);
      expect(u).toBeLessThan(1);
      expect(uniformFromValue(id)).toBe(u);
    }
  });

  it.each([0.1, 0.5, 0.9])('keeps about %d of distinct values', (percent) => {
    const kept = ids.filter((id) => sampleKeeps(id, percent)).length / ids.length;
    expect(Math.abs(kept - percent)).toBeLessThan(0.05);
  });

  it('keeps none at 0 and all at 1', () => {
    expect(ids.some((id) => sampleKeeps(id, 0))).toBe(false);
    expect(ids.every((id) => sampleKeeps(id, 1))).toBe(true);
  });

  it('is needed: @segment/tsub 2.0.1\'s sample_event with a path keeps every message', () => {
    const kept = ids.filter((id) => transform({ messageId: id }, [{ type: 'sample_event', config: { sample: { percent: 0.5, path: 'messageId' } } }]) !== null);
    expect(kept.length).toBe(ids.length);
  });
});
