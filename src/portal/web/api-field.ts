/**
 * The form field an admin API 400 names, read from the front of its message (`name: must …`,
 * `rules[0].jsonSchema/properties/…: (TRACK "Signed Up" version 1) …`, `forwardingViolationsTo: …`):
 * the portal shows the API's own words next to that field and checks nothing itself. Undefined
 * when the message names none of the form's fields. Pure.
 */
export function apiErrorField<F extends string>(message: string, fields: readonly F[]): F | undefined {
  const head = message.split(': ')[0].replace(/^body\//, '');
  // A rule's field is named after its place in the list: `rules[0].key` → `key`.
  const named = head.replace(/^rules\[\d+\]\.?/, '').split(/[[./]/)[0];
  return fields.find((field) => field === named);
}
