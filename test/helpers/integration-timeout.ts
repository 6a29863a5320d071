// Real Temporal, real processes: a test may wait seconds for a workflow. testTimeout is a global Jest
// option (ignored inside a project), so the integration project sets its own here.
jest.setTimeout(60_000);
