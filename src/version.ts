/**
 * Switchyard's version: what `npm start` prints, `/health` answers and the OpenAPI document states.
 * Kept equal to package.json's `version` by test/unit/version.test.ts (the build's rootDir is src/,
 * so package.json cannot be imported here); CHANGELOG.md names the same version first.
 */
export const VERSION = '1.0.0';

/** The seed's `<service_name>/1.0` product token: the name and the version's major.minor. */
export const USER_AGENT = `Switchyard/${VERSION.split('.').slice(0, 2).join('.')}`;
