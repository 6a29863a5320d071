/**
 * Writes docs/configuration.md from src/config.ts (`npm run docs:config`): every variable, its
 * default and its meaning come from SETTINGS, the one home of configuration, so the page cannot
 * drift from the code (test/unit/docs.test.ts fails when the committed page is not this output).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { SETTINGS } from '../src/config';

export const CONFIGURATION_DOC = path.join(__dirname, '..', 'docs', 'configuration.md');

const cell = (text: string) => text.replace(/\|/g, '\\|');

export function configurationDoc(): string {
  const rows = Object.values(SETTINGS).map((s) => `| \`${s.env}\` | ${s.default ? `\`${cell(s.default)}\`` : '(empty)'} | ${cell(s.description)} |`);
  return [
    '# Configuration',
    '',
    '<!-- Generated from src/config.ts by `npm run docs:config`; edit the descriptions there. -->',
    '',
    'Every setting is an environment variable, read once at start-up (`src/config.ts`); a bad value stops',
    "start-up with the variable's name and the rule. Durations are written `500ms`, `5s`, `10m`, `4h`, `1d`.",
    '',
    '| Variable | Default | Meaning |',
    '|---|---|---|',
    ...rows,
    '',
    "The delivery timing (`DELIVERY_*`) is fixed into each message's workflow input when it is accepted, so",
    'changing it never alters a delivery already under way. Temporal over TLS, mutual TLS and Temporal Cloud',
    '(`TEMPORAL_TLS*`, `TEMPORAL_API_KEY`): [production.md](production.md#secured-temporal).',
    '',
  ].join('\n');
}

if (require.main === module) {
  writeFileSync(CONFIGURATION_DOC, configurationDoc());
  console.log(`wrote ${path.relative(process.cwd(), CONFIGURATION_DOC)}`);
}
