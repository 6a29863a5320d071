import type { preValidationHookHandler } from 'fastify';
import { settingsFromJsonText } from '../../mappings/segment-subscription';
import { badRequest } from '../errors';

/**
 * A Terraform `segment_destination_subscription` holds `settings` as a JSON string
 * (`jsonencode({...})`). Before the schema checks a body, each mapping's string settings become the
 * object they hold (read as a request body is read), so every rule of the object applies to them.
 */
export const readTerraformSettings: preValidationHookHandler = (request, _reply, done) => {
  const mappings = (request.body as { mappings?: unknown } | null)?.mappings;
  if (!Array.isArray(mappings)) return done();
  for (const [index, mapping] of mappings.entries()) {
    if (mapping === null || typeof mapping !== 'object' || typeof (mapping as { settings?: unknown }).settings !== 'string') continue;
    const read = settingsFromJsonText((mapping as { settings: string }).settings);
    if ('rule' in read) return done(badRequest(`mappings[${index}].settings: ${read.rule}`));
    (mapping as { settings: unknown }).settings = read.settings;
  }
  done();
};
