/** One row of the audit log, as the store keeps it, the API answers it and the portal shows it (no Node types: the portal imports it). */
export interface AuditEntry {
  at: string;
  actor: { tokenId: string | null; name: string | null };
  action: string;
  target: string | null;
  outcome: 'success' | 'denied';
  requestId: string;
  ip: string;
  /** Names of the fields a change set, never their values. */
  changed: string[];
}

export interface AuditRecord extends AuditEntry {
  id: string;
}
