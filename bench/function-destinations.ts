/**
 * The function bench systems, priced: `inserted` is a webhook destination that runs an insert
 * function on every message (it adds one property and returns the event, which the webhook
 * delivers); `scripted` is a destination function whose onTrack POSTs the event to the bench
 * receiver (its URL is the function's setting), so the receipt is the function's own fetch.
 */
type Admin = <T>(url: string, body: unknown) => Promise<T>;

const URL_SETTING = [{ name: 'url', label: 'URL', description: 'where the event goes', type: 'STRING', required: true, sensitive: false }];

export const INSERT_CODE = 'async function onTrack(event, settings) { event.properties.checkedBy = settings.tag; return event; }';
export const DESTINATION_CODE = 'async function onTrack(event, settings) { await fetch(settings.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(event) }); }';

/** A source whose webhook destination runs an insert function. */
export async function insertedSource(admin: Admin, receiverUrl: string): Promise<{ id: string; writeKey: string }> {
  const source = await admin<{ id: string; writeKey: string }>('/admin/sources', { name: 'bench inserted' });
  const destination = await admin<{ id: string }>(`/admin/sources/${source.id}/destinations`, { enabled: true, sharedSecret: 'bench-secret', webhooks: [{ url: receiverUrl }] });
  const fn = await admin<{ id: string }>('/admin/functions', {
    resourceType: 'INSERT_DESTINATION',
    displayName: 'bench insert',
    code: INSERT_CODE,
    settings: [{ name: 'tag', label: 'Tag', description: 'added to every event', type: 'STRING', required: true, sensitive: false }],
  });
  await admin('/admin/insert-function-instances', { functionId: fn.id, integrationId: destination.id, enabled: true, settings: { tag: 'bench' } });
  return source;
}

/** A source whose destination is a destination function that POSTs each event to the receiver. */
export async function scriptedSource(admin: Admin, receiverUrl: string): Promise<{ id: string; writeKey: string }> {
  const source = await admin<{ id: string; writeKey: string }>('/admin/sources', { name: 'bench scripted' });
  const fn = await admin<{ id: string }>('/admin/functions', { resourceType: 'DESTINATION', displayName: 'bench destination', code: DESTINATION_CODE, settings: URL_SETTING });
  await admin(`/admin/sources/${source.id}/destinations`, { type: 'function', name: 'bench scripted', enabled: true, functionId: fn.id, settings: { url: receiverUrl } });
  return source;
}
