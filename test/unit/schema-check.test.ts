import { schemaProblemMessage, schemaProblems } from '../../src/store/schema-check';

const KNOWN = ['0001_a', '0002_b', '0003_c'];

describe('schemaProblems', () => {
  it.each([
    { applied: KNOWN, pending: [], unknown: [], case: 'every migration applied' },
    { applied: [], pending: KNOWN, unknown: [], case: 'a new store' },
    { applied: ['0001_a'], pending: ['0002_b', '0003_c'], unknown: [], case: 'an older version migrated it' },
    { applied: ['0001_a', '0003_c'], pending: ['0002_b'], unknown: [], case: 'one skipped' },
    { applied: [...KNOWN, '0004_newer'], pending: [], unknown: ['0004_newer'], case: 'a newer version migrated it' },
  ])('$case', ({ applied, pending, unknown }) => {
    expect(schemaProblems(KNOWN, applied)).toEqual({ pending, unknown });
  });
});

describe('schemaProblemMessage', () => {
  it('is silent when the schema is current, or when the process may migrate what is pending', () => {
    expect(schemaProblemMessage('s.db', { pending: [], unknown: [] }, false)).toBeUndefined();
    expect(schemaProblemMessage('s.db', { pending: ['0003_c'], unknown: [] }, true)).toBeUndefined();
  });

  it('names the pending migrations and npm run migrate when the process may not migrate', () => {
    const message = schemaProblemMessage('postgres://sy:***@db:5432/sy', { pending: ['0002_b', '0003_c'], unknown: [] }, false)!;
    expect(message).toContain('The store postgres://sy:***@db:5432/sy is not migrated: 0002_b, 0003_c are not applied');
    expect(message).toContain('Apply them with: npm run migrate');
    expect(message).toContain('DATABASE_MIGRATE=on');
  });

  it('refuses a store a newer version migrated, whether or not it may migrate', () => {
    for (const migrate of [true, false]) {
      expect(schemaProblemMessage('s.db', { pending: [], unknown: ['0004_newer'] }, migrate)).toContain('was migrated by a newer Switchyard: it has applied 0004_newer');
    }
  });
});
