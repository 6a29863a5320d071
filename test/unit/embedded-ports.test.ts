import { bannerSaysListening, embeddedPorts, splitAddress, takenPortMessage } from '../../src/temporal/embedded-ports';

it.each([
  ['127.0.0.1:7233', { host: '127.0.0.1', port: 7233 }],
  ['localhost:7300', { host: '127.0.0.1', port: 7300 }],
  ['[::1]:7233', { host: '::1', port: 7233 }],
  ['10.0.0.5:7233', { host: '10.0.0.5', port: 7233 }],
])('splits %s into the host and port it probes', (address, expected) => {
  expect(splitAddress(address)).toEqual(expected);
});

it('names each port npm start binds with the variable that moves it', () => {
  expect(embeddedPorts({ temporalAddress: 'localhost:7233', temporalUiPort: 8233, port: 8080, host: '0.0.0.0' })).toEqual([
    { port: 7233, host: '127.0.0.1', variable: 'TEMPORAL_ADDRESS', what: 'the embedded Temporal server' },
    { port: 8233, host: '127.0.0.1', variable: 'TEMPORAL_UI_PORT', what: "the embedded Temporal server's Web UI" },
    { port: 8080, host: '127.0.0.1', variable: 'PORT', what: 'the Switchyard API' },
  ]);
});

it('says which port is taken, the variable that moves it, and how to use the other server on purpose', () => {
  const [temporal, ui] = embeddedPorts({ temporalAddress: '127.0.0.1:7233', temporalUiPort: 8233, port: 8080, host: '0.0.0.0' });
  const message = takenPortMessage(temporal);
  expect(message).toContain('port 7233 on 127.0.0.1 is already in use');
  expect(message).toContain('TEMPORAL_ADDRESS=127.0.0.1:<a free port>');
  expect(message).toContain('EMBEDDED_TEMPORAL=false with TEMPORAL_ADDRESS=127.0.0.1:7233');
  expect(takenPortMessage(ui)).toContain('Set TEMPORAL_UI_PORT to a free port');
});

it.each([
  ['CLI 1.5.1 (Server 1.29.1, UI 2.41.0)\n\nServer:  localhost:7233\nUI:      http://localhost:8233\n', true],
  ['temporal-dev: building the Temporal CLI v1.5.1 into .tools/bin (once; a few minutes)...\n', false],
  ['time=... level=WARN msg="Server: starting"\n', false],
  ['', false],
])('reads the dev server as listening only from its banner: %j → %s', (output, listening) => {
  expect(bannerSaysListening(output)).toBe(listening);
});
